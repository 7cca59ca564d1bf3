// bot.cpp - a Durak bot in C++17: the heuristic bot (sample_bots/python/heuristic_bot.py) ported.
//
// Build (in sample_bots/cpp):  g++ -O2 -std=c++17 -Wall -Wextra -o bot bot.cpp
// Run:                         ./bot
//   e.g. from the repository root:
//   .venv/bin/durak play "./sample_bots/cpp/bot" "{python} sample_bots/python/random_bot.py"
// Needs nlohmann::json (Debian/Ubuntu package nlohmann-json3-dev, /usr/include/nlohmann/json.hpp).
//
// Strategy: every card has a worth, its rank plus 100 for a trump. The bot plays the cheapest card
// that does the job, sheds low cards early, keeps its trumps, transfers when that is cheaper than
// beating, takes rather than spend a high trump on a card or two early on, and in chase plays for
// chases (k >= 2 cards laid at once). It reads only "id", "legal" and "view" of a request and always
// answers one of the "legal" strings: it picks among them and never builds an action of its own.
//
// Protocol: one JSON object per line each way (protocol/PROTOCOL.md). Lines are read whole with
// std::getline, whatever their length (a game_over can carry tens of KiB of events). Unknown message
// types and fields are ignored; stdout is flushed after every line; debug goes to stderr only. The bot
// exits on "shutdown" or at EOF. Its randomness (an occasional random move in a game that goes round
// in circles) is reseeded from each "game" message's "seed", so a game replays the same way.
//
// No warm-up before hello: this is compiled ahead of time, so the first move runs at full speed
// (a JIT runtime such as Java's must warm up inside its startup budget: the bot is frozen after hello).
//
// Crash mode, for tests: with the environment variable DURAK_SAMPLE_CRASH=1 the bot throws an uncaught
// std::runtime_error at its first request, so libstdc++ prints "terminate called after throwing an
// instance of 'std::runtime_error'" and "what():  sample crash: ..." on stderr and aborts.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

using nlohmann::json;

namespace {

const std::string RANKS = "23456789TJQKA";  // T is the ten
constexpr int TRUMP_BONUS = 100;            // any trump is worth more than any plain card
constexpr int BIG_STOCK = 12;               // "early in the game": at least this many cards left to draw
constexpr int LONG_GAME = 250;              // own decisions: a game this long is probably going round in circles
const int RANK_T = static_cast<int>(RANKS.find('T'));
const int RANK_J = static_cast<int>(RANKS.find('J'));

std::vector<std::string> words(const std::string& action) {
    std::vector<std::string> out;
    std::istringstream in(action);
    for (std::string word; in >> word;) out.push_back(word);
    return out;
}

// How much a card is worth keeping. In fools_fool diamonds are trump.
int worth(const std::string& card, char trump) {
    if (card.size() < 2) return 0;
    const auto rank = RANKS.find(card[0]);
    return (rank == std::string::npos ? 0 : static_cast<int>(rank)) + (card[1] == trump ? TRUMP_BONUS : 0);
}

class Policy {
public:
    Policy(const json& view, const std::vector<std::string>& legal, const std::string& variant)
        : view_(view), legal_(legal), chase_(variant == "chase"), fools_fool_(variant == "fools_fool") {
        const std::string suit = view.value("trump_suit", std::string("D"));
        trump_ = suit.empty() ? 'D' : suit[0];
    }

    // The action to play: always one string of legal.
    std::string choose() const {
        if (fools_fool_) {
            // Lead the cheapest card; beat the pile's top with the cheapest card that can.
            auto moves = of_kind("lead");
            if (moves.empty()) moves = of_kind("beat-top");
            return moves.empty() ? legal_.front() : cheapest(moves);
        }
        const int stock = view_.value("stock", 0);
        const bool early = stock >= BIG_STOCK;

        // Attacking: the lowest rank, with every plain card of it.
        const auto attacks = of_kind("attack");
        if (!attacks.empty()) return cheapest(attacks);

        // Throwing in: "pass" and any throws.
        if (has("pass")) {
            const auto throws = of_kind("throw");
            if (throws.empty()) return "pass";
            const std::string best = cheapest(throws);
            if (chase_) return chases(best) > 0 ? best : "pass";  // a single card scores nothing: keep it
            if (stock == 0 || cost(best) < (early ? RANK_J : TRUMP_BONUS)) return best;
            return "pass";
        }

        // Defending: transfer when that is cheaper than beating; else beat as cheaply as possible, or take.
        auto beats = of_kind("beat");
        std::stable_sort(beats.begin(), beats.end(), [this](const std::string& a, const std::string& b) {
            return std::make_tuple(cost(a), -worth(words(a)[1], trump_)) <
                   std::make_tuple(cost(b), -worth(words(b)[1], trump_));
        });
        const auto transfers = of_kind("transfer");
        if (!transfers.empty()) {
            std::string transfer = transfers.front();
            for (const auto& t : transfers)
                if (cost(t) < cost(transfer)) transfer = t;
            if ((beats.empty() || cost(transfer) < cost(beats.front())) && (cost(transfer) < TRUMP_BONUS || !early))
                return transfer;  // the attack moves on; early on, never give up a trump for that
        }
        if (!has("take")) return beats.empty() ? legal_.front() : beats.front();
        if (beats.empty() || !can_beat_all()) return "take";  // some card would stay unbeaten anyway
        const std::string& beat = beats.front();
        const std::string beating_card = words(beat)[2];
        const std::size_t table_size = view_.contains("table") ? view_["table"].size() : 0;
        if (early && worth(beating_card, trump_) >= TRUMP_BONUS + RANK_T && table_size <= 2)
            return "take";  // a card or two is cheap to take back; a high trump is not worth spending yet
        return beat;
    }

private:
    const json& view_;
    const std::vector<std::string>& legal_;
    bool chase_, fools_fool_;
    char trump_;

    bool has(const std::string& action) const {
        return std::find(legal_.begin(), legal_.end(), action) != legal_.end();
    }

    std::vector<std::string> of_kind(const std::string& kind) const {
        std::vector<std::string> out;
        for (const auto& action : legal_)
            if (action.compare(0, action.find(' '), kind) == 0) out.push_back(action);
        return out;
    }

    // The worth of the dearest card an action gives up (for "beat T C", only C).
    int cost(const std::string& action) const {
        const auto w = words(action);
        int best = 0;
        for (std::size_t i = (w.front() == "beat" ? 2 : 1); i < w.size(); ++i) best = std::max(best, worth(w[i], trump_));
        return best;
    }

    // Chase Durak: laying k >= 2 cards at once scores k / 2 chases, and the fewest chases lose.
    int chases(const std::string& action) const {
        return chase_ ? static_cast<int>(words(action).size() - 1) / 2 : 0;
    }

    // Most chases first (chase only), then the cheapest cards, then as many of them as possible.
    std::string cheapest(const std::vector<std::string>& actions) const {
        auto key = [this](const std::string& a) {
            return std::make_tuple(-chases(a), cost(a), -static_cast<int>(words(a).size()));
        };
        std::string best = actions.front();
        auto best_key = key(best);
        for (const auto& action : actions) {
            const auto k = key(action);
            if (k < best_key) best = action, best_key = k;
        }
        return best;
    }

    // Can every unbeaten table card get a beating card of its own? Greedy: dearest target first.
    bool can_beat_all() const {
        std::map<std::string, std::vector<std::string>> beaters;
        for (const auto& action : of_kind("beat")) {
            const auto w = words(action);
            beaters[w[1]].push_back(w[2]);
        }
        std::vector<std::string> unbeaten;
        if (view_.contains("table"))
            for (const auto& pair : view_["table"])
                if (pair.size() >= 2 && pair[1].is_null()) unbeaten.push_back(pair[0].get<std::string>());
        std::stable_sort(unbeaten.begin(), unbeaten.end(), [this](const std::string& a, const std::string& b) {
            return worth(a, trump_) > worth(b, trump_);
        });
        std::set<std::string> used;
        for (const auto& target : unbeaten) {
            const std::string* pick = nullptr;
            for (const auto& card : beaters[target])
                if (!used.count(card) && (!pick || worth(card, trump_) < worth(*pick, trump_))) pick = &card;
            if (!pick) return false;
            used.insert(*pick);
        }
        return true;
    }
};

void send(const json& message) {
    std::cout << message.dump() << '\n' << std::flush;  // the referee is waiting for the whole line
}

}  // namespace

int main() {
    std::ios::sync_with_stdio(false);
    const char* crash_env = std::getenv("DURAK_SAMPLE_CRASH");
    const bool crash = crash_env && std::string(crash_env) == "1";
    std::mt19937_64 rng(0);  // reseeded from each game's seed: the same game, the same choices
    std::string variant = "podkidnoy";
    int moves = 0;

    for (std::string line; std::getline(std::cin, line);) {
        if (line.empty() || line == "\r") continue;
        json message;
        try {
            message = json::parse(line);
        } catch (const json::exception& error) {
            std::cerr << "bot.cpp: ignoring a line that is not JSON: " << error.what() << '\n';
            continue;
        }
        if (!message.is_object()) continue;
        const std::string type = message.value("type", std::string());
        if (type == "hello") {
            send({{"type", "hello"}, {"protocol", 2}, {"name", "heuristic-cpp"}, {"version", "1.0"}});
        } else if (type == "game") {
            const json rules = message.value("rules", json::object());
            variant = rules.value("variant", std::string("podkidnoy"));
            moves = 0;
            rng.seed(message.value("seed", std::uint64_t{0}));
        } else if (type == "request") {
            if (crash) throw std::runtime_error("sample crash: DURAK_SAMPLE_CRASH=1 crashes the bot at its first request");
            const auto legal = message.at("legal").get<std::vector<std::string>>();
            std::string action;
            if (++moves > LONG_GAME && std::uniform_real_distribution<double>(0.0, 1.0)(rng) < 0.2) {
                // Fixed rules can loop forever until the action cap calls a draw: a random move breaks the loop.
                action = legal[std::uniform_int_distribution<std::size_t>(0, legal.size() - 1)(rng)];
            } else {
                action = Policy(message.at("view"), legal, variant).choose();
            }
            send({{"type", "action"}, {"id", message.at("id")}, {"action", action}});
        } else if (type == "shutdown") {
            return 0;
        }
        // game_over, and any message type this bot does not know, needs no reply
    }
    return 0;
}
