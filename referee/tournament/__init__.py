"""Tournaments: the TOML config, the schedule of slots, the runner that plays them and the resume check.

Words used throughout: a *slot* is one series at fixed seats (:class:`.schedule.Slot`); it is *waiting*, *in
flight* (submitted to an executor) or *stored* (committed to the database). A bot's *identity* is what makes it
the same bot as its stored games (:class:`.opening.BotIdentity`: config settings and files); a tournament's
*key* is its row's name and fingerprint (:class:`.course.TournamentKey`). The *course* is what a run plays.
"""
