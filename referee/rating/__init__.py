"""Rating and telling: outcomes as comparisons, Bradley-Terry Elo, SPRT, per-bot statistics, leaderboard tables."""
