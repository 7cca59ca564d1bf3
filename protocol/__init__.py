"""The wire contract and shared vocabulary: cards, actions, rules config, events, views, records.

Imports nothing of ``referee``; a Python bot needs only this package (and may import the engine too).
"""

from protocol.build import load_sources_if_asked

load_sources_if_asked()
