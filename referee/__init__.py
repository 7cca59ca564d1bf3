"""durak-referee: runs Durak games between bot programs and rates them."""

__version__ = "0.1.0"
