"""Tournaments: the TOML config, the schedule of slots, the runner that plays them and the resume check."""
