"""Running games: a game or series between bot clients, one-off play, bot checks and in-process self-play."""
