"""The wire contract and shared vocabulary: cards, actions, rules config, events, views, records.

Imports nothing of ``referee``; a Python bot needs only this package.
"""
