"""Experience memory (LanceDB, ATU, UGC): DESIGN section 5. Not built yet (issue 4)."""
