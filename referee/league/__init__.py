"""The league: a continuous competition that runs for weeks and takes new bot versions while it runs.

Its pure core is the matchmaker (:mod:`.matchmaker`): which versions sit at the next deal group, as a function
of the league's state, with no processes, database or clock of its own.
"""
