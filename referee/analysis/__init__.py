"""Post-game analysis (``durak analyze``): every decision of one seat judged from that seat's information only.

:mod:`~referee.analysis.observe` walks a stored game and hands on, per decision, only what the seat was told;
:mod:`~referee.analysis.evaluate` values each legal action from that (sampled worlds and playouts, or
:mod:`~referee.analysis.exact` endgames); :mod:`~referee.analysis.analyze` judges, marks
(:mod:`~referee.analysis.marks`) and sums up. The engine never imports this package.
"""
