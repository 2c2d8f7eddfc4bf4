import os


def launch(x):
    # Reports everything the plan worker's environment holds; the test checks no key is in it.
    raise RuntimeError("env-probe: " + repr(sorted(os.environ.items())))
