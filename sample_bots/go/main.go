// Command bot is a Durak bot in Go, standard library only: the heuristic bot
// (sample_bots/python/heuristic_bot.py) ported.
//
// Build (in sample_bots/go):  go build -o bot .
// Run:                        ./bot
//
//	e.g. from the repository root:
//	.venv/bin/durak play "./sample_bots/go/bot" "{python} sample_bots/python/random_bot.py"
//
// Strategy: every card has a worth, its rank plus 100 for a trump. The bot plays the cheapest card
// that does the job, sheds low cards early, keeps its trumps, transfers when that is cheaper than
// beating, takes rather than spend a high trump on a card or two early on, and in chase plays for
// chases (k >= 2 cards laid at once). It reads only "id", "legal" and "view" of a request and always
// answers one of the "legal" strings: it picks among them and never builds an action of its own.
//
// Protocol: one JSON object per line each way (protocol/PROTOCOL.md). Lines are read whole with
// bufio.Reader.ReadBytes, whatever their length (a game_over can carry tens of KiB of events).
// encoding/json ignores unknown fields, and unknown message types are skipped; stdout is flushed
// after every line; debug goes to stderr only. The bot exits on "shutdown" or at EOF. Its randomness
// (an occasional random move in a game that goes round in circles) is reseeded from each "game"
// message's "seed", so a game replays the same way.
//
// No warm-up before hello: Go is compiled ahead of time, so the first move runs at full speed (a JIT
// runtime such as Java's must warm up inside its startup budget: the bot is frozen after hello).
//
// Crash mode, for tests: with the environment variable DURAK_SAMPLE_CRASH=1 the bot panics at its
// first request ("panic: sample crash: ..." on stderr, exit status 2).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"sort"
	"strings"
)

const (
	ranks      = "23456789TJQKA" // T is the ten
	trumpBonus = 100             // any trump is worth more than any plain card
	bigStock   = 12              // "early in the game": at least this many cards left to draw
	longGame   = 250             // own decisions: a game this long is probably going round in circles
)

// view holds the fields of a view this bot reads; encoding/json skips the others.
type view struct {
	TrumpSuit string      `json:"trump_suit"`
	Stock     int         `json:"stock"`
	Table     [][]*string `json:"table"` // [attack card, beating card or null] pairs
}

// message holds the fields this bot reads of any message the referee sends.
type message struct {
	Type  string   `json:"type"`
	ID    int64    `json:"id"`
	Legal []string `json:"legal"`
	View  view     `json:"view"`
	Seed  int64    `json:"seed"`
	Rules struct {
		Variant string `json:"variant"`
	} `json:"rules"`
}

// worth is how much a card is worth keeping. In fools_fool diamonds are trump.
func worth(card string, trump byte) int {
	if len(card) < 2 {
		return 0
	}
	w := strings.IndexByte(ranks, card[0])
	if w < 0 {
		w = 0
	}
	if card[1] == trump {
		w += trumpBonus
	}
	return w
}

type policy struct {
	view  view
	legal []string
	trump byte
	chase bool
}

func kindOf(action string) string {
	if i := strings.IndexByte(action, ' '); i >= 0 {
		return action[:i]
	}
	return action
}

func (p *policy) ofKind(kind string) []string {
	var out []string
	for _, action := range p.legal {
		if kindOf(action) == kind {
			out = append(out, action)
		}
	}
	return out
}

func (p *policy) has(action string) bool {
	for _, a := range p.legal {
		if a == action {
			return true
		}
	}
	return false
}

// cost is the worth of the dearest card an action gives up (for "beat T C", only C).
func (p *policy) cost(action string) int {
	words := strings.Fields(action)
	first := 1
	if words[0] == "beat" {
		first = 2
	}
	best := 0
	for _, card := range words[first:] {
		if w := worth(card, p.trump); w > best {
			best = w
		}
	}
	return best
}

// chases: in chase Durak, laying k >= 2 cards at once scores k / 2 chases, and the fewest chases lose.
func (p *policy) chases(action string) int {
	if !p.chase {
		return 0
	}
	return (len(strings.Fields(action)) - 1) / 2
}

// cheapest: most chases first (chase only), then the cheapest cards, then as many of them as possible.
func (p *policy) cheapest(actions []string) string {
	key := func(a string) [3]int { return [3]int{-p.chases(a), p.cost(a), -len(strings.Fields(a))} }
	less := func(a, b [3]int) bool {
		for i := range a {
			if a[i] != b[i] {
				return a[i] < b[i]
			}
		}
		return false
	}
	best, bestKey := actions[0], key(actions[0])
	for _, action := range actions[1:] {
		if k := key(action); less(k, bestKey) {
			best, bestKey = action, k
		}
	}
	return best
}

// canBeatAll: can every unbeaten table card get a beating card of its own? Greedy: dearest target first.
func (p *policy) canBeatAll() bool {
	beaters := map[string][]string{}
	for _, action := range p.ofKind("beat") {
		words := strings.Fields(action)
		beaters[words[1]] = append(beaters[words[1]], words[2])
	}
	var unbeaten []string
	for _, pair := range p.view.Table {
		if len(pair) >= 2 && pair[0] != nil && pair[1] == nil {
			unbeaten = append(unbeaten, *pair[0])
		}
	}
	sort.SliceStable(unbeaten, func(i, j int) bool { return worth(unbeaten[i], p.trump) > worth(unbeaten[j], p.trump) })
	used := map[string]bool{}
	for _, target := range unbeaten {
		pick := ""
		for _, card := range beaters[target] {
			if !used[card] && (pick == "" || worth(card, p.trump) < worth(pick, p.trump)) {
				pick = card
			}
		}
		if pick == "" {
			return false
		}
		used[pick] = true
	}
	return true
}

// choose returns the action to play: always one string of legal.
func choose(v view, legal []string, variant string) string {
	p := &policy{view: v, legal: legal, trump: 'D', chase: variant == "chase"}
	if v.TrumpSuit != "" {
		p.trump = v.TrumpSuit[0]
	}
	if variant == "fools_fool" {
		// Lead the cheapest card; beat the pile's top with the cheapest card that can.
		moves := p.ofKind("lead")
		if len(moves) == 0 {
			moves = p.ofKind("beat-top")
		}
		if len(moves) == 0 {
			return legal[0]
		}
		return p.cheapest(moves)
	}
	early := v.Stock >= bigStock

	// Attacking: the lowest rank, with every plain card of it.
	if attacks := p.ofKind("attack"); len(attacks) > 0 {
		return p.cheapest(attacks)
	}

	// Throwing in: "pass" and any throws.
	if p.has("pass") {
		throws := p.ofKind("throw")
		if len(throws) == 0 {
			return "pass"
		}
		best := p.cheapest(throws)
		if p.chase { // a single card scores nothing: keep it, it may make a pair later
			if p.chases(best) > 0 {
				return best
			}
			return "pass"
		}
		limit := trumpBonus
		if early {
			limit = strings.IndexByte(ranks, 'J')
		}
		if v.Stock == 0 || p.cost(best) < limit {
			return best
		}
		return "pass"
	}

	// Defending: transfer when that is cheaper than beating; else beat as cheaply as possible, or take.
	beats := p.ofKind("beat")
	sort.SliceStable(beats, func(i, j int) bool {
		ci, cj := p.cost(beats[i]), p.cost(beats[j])
		if ci != cj {
			return ci < cj
		}
		return worth(strings.Fields(beats[i])[1], p.trump) > worth(strings.Fields(beats[j])[1], p.trump)
	})
	if transfers := p.ofKind("transfer"); len(transfers) > 0 {
		transfer := transfers[0]
		for _, t := range transfers[1:] {
			if p.cost(t) < p.cost(transfer) {
				transfer = t
			}
		}
		if (len(beats) == 0 || p.cost(transfer) < p.cost(beats[0])) && (p.cost(transfer) < trumpBonus || !early) {
			return transfer // the attack moves on; early on, never give up a trump for that
		}
	}
	if !p.has("take") {
		if len(beats) > 0 {
			return beats[0]
		}
		return legal[0]
	}
	if len(beats) == 0 || !p.canBeatAll() {
		return "take" // some card would stay unbeaten anyway: take now instead of spending cards
	}
	beat := beats[0]
	beatingCard := strings.Fields(beat)[2]
	if early && worth(beatingCard, p.trump) >= trumpBonus+strings.IndexByte(ranks, 'T') && len(v.Table) <= 2 {
		return "take" // a card or two is cheap to take back; a high trump is not worth spending yet
	}
	return beat
}

type helloReply struct {
	Type     string `json:"type"`
	Protocol int    `json:"protocol"`
	Name     string `json:"name"`
	Version  string `json:"version"`
}

type actionReply struct {
	Type   string `json:"type"`
	ID     int64  `json:"id"`
	Action string `json:"action"`
}

func main() {
	crash := os.Getenv("DURAK_SAMPLE_CRASH") == "1"
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	send := func(reply interface{}) {
		line, err := json.Marshal(reply)
		if err != nil {
			panic(err)
		}
		out.Write(append(line, '\n'))
		out.Flush() // the referee is waiting for the whole line
	}
	rng := rand.New(rand.NewSource(0)) // reseeded from each game's seed: the same game, the same choices
	variant, moves := "podkidnoy", 0

	for {
		line, err := in.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			var msg message
			if jsonErr := json.Unmarshal(line, &msg); jsonErr != nil {
				fmt.Fprintf(os.Stderr, "bot.go: ignoring a line that is not a message: %v\n", jsonErr)
			} else {
				switch msg.Type {
				case "hello":
					send(helloReply{Type: "hello", Protocol: 2, Name: "heuristic-go", Version: "1.0"})
				case "game":
					variant, moves = msg.Rules.Variant, 0
					if variant == "" {
						variant = "podkidnoy"
					}
					rng.Seed(msg.Seed)
				case "request":
					if crash {
						panic("sample crash: DURAK_SAMPLE_CRASH=1 crashes the bot at its first request")
					}
					var action string
					if moves++; moves > longGame && rng.Float64() < 0.2 {
						// Fixed rules can loop forever until the action cap calls a draw: a random move breaks the loop.
						action = msg.Legal[rng.Intn(len(msg.Legal))]
					} else {
						action = choose(msg.View, msg.Legal, variant)
					}
					send(actionReply{Type: "action", ID: msg.ID, Action: action})
				case "shutdown":
					return
				}
				// game_over, and any message type this bot does not know, needs no reply
			}
		}
		if err == io.EOF {
			return
		} else if err != nil {
			fmt.Fprintf(os.Stderr, "bot.go: reading stdin: %v\n", err)
			return
		}
	}
}
