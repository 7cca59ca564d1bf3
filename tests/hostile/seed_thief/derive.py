"""The public derivation of a tournament's decks (seeds/RULES.md 8; referee/engine/rng.py, deal.py and
referee/tournament/schedule.py), copied as any entrant could copy it: from a tournament seed and the game id
a bot is sent, the hand that bot is dealt. Standard library only."""
import hashlib

NAMES = [rank + suit for rank in "23456789TJQKA" for suit in "CDHS"]  # card c = rank * 4 + suit
HAND_SIZE = 6
_WORD = 1 << 64


def derive_seed(seed, *labels):
    text = ":".join(str(part) for part in (seed, *labels))
    return int.from_bytes(hashlib.sha256(b"durak-referee/derive/v1:" + text.encode()).digest()[:8], "big") >> 1


class Rng:
    def __init__(self, seed):
        self.seed, self.block, self.words = seed, 0, []

    def word(self):
        if not self.words:
            digest = hashlib.sha256(b"durak-referee/v1:%d:%d" % (self.seed, self.block)).digest()
            self.block += 1
            self.words = [int.from_bytes(digest[i:i + 8], "big") for i in (24, 16, 8, 0)]
        return self.words.pop()

    def below(self, n):
        limit = _WORD - _WORD % n
        while True:
            word = self.word()
            if word < limit:
                return word % n


def parse_game_id(game):
    """``t:<table id>|d<deal>|r<rotation>|g<n>`` -> (table id, deal, game index)."""
    table, deal, _rotation, number = game[2:].rsplit("|", 3)
    return table, int(deal[1:]), int(number[1:]) - 1


def dealt(tournament_seed, game, seat, players, deck_size):
    """What ``seat`` is shown at the start of ``game`` if the tournament seed is ``tournament_seed``: its sorted
    hand, the face-up trump card and the dealer. All three must match: a 6-card hand alone is matched by chance
    once in about 2 million candidates, and a walk of a whole system tries tens of thousands."""
    table, deal, index = parse_game_id(game)
    rng = Rng(derive_seed(derive_seed(tournament_seed, "deal", table, deal), "game", index))
    cards = list(range(52 - deck_size, 52))
    for i in range(len(cards) - 1, 0, -1):  # Fisher-Yates, as SeededRng.shuffle
        j = rng.below(i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    dealer = rng.below(players)
    dealt_cards = players * HAND_SIZE
    hand = [card for i, card in enumerate(cards[:dealt_cards]) if (dealer + 1 + i) % players == seat]
    trump = cards[dealt_cards] if dealt_cards < deck_size else cards[dealt_cards - 1]
    return sorted(NAMES[card] for card in hand), NAMES[trump], dealer
