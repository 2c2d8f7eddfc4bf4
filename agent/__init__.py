"""The SAGE agent (docs/architecture.md, The agent): one episode loop (`driver.py`) driving a searcher, the
transform catalog (`offline.py`) or a model (`llm_loop.py`); every candidate evaluated; the
episodes recorded in and credited to the experience memory. `optimize.py` picks the searcher."""
