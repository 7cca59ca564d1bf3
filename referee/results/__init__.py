"""What games leave: the game record, the store, replays and their telling, results read back for rating."""
