// Bot.java - a Durak bot in Java 17 with Gson: the heuristic bot (sample_bots/python/heuristic_bot.py) ported.
//
// Build (in sample_bots/java):  javac -cp /usr/share/java/gson.jar -d classes Bot.java
// Run:                          java -cp classes:/usr/share/java/gson.jar Bot
//   Gson is the Debian/Ubuntu package libgoogle-gson-java (/usr/share/java/gson.jar). The class path is
//   relative: run it from sample_bots/java (a tournament config's dir = "sample_bots/java").
//
// Strategy: every card has a worth, its rank plus 100 for a trump. The bot plays the cheapest card
// that does the job, sheds low cards early, keeps its trumps, transfers when that is cheaper than
// beating, takes rather than spend a high trump on a card or two early on, and in chase plays for
// chases (k >= 2 cards laid at once). It reads only "id", "legal" and "view" of a request and always
// answers one of the "legal" strings: it picks among them and never builds an action of its own.
//
// Protocol: one JSON object per line each way (protocol/PROTOCOL.md). Lines are read whole with
// BufferedReader.readLine, whatever their length (a game_over can carry tens of KiB of events). Unknown
// message types and fields are ignored; stdout is flushed after every line; debug goes to stderr only.
// The bot exits on "shutdown" or at EOF. Its randomness (an occasional random move in a game that goes
// round in circles) is reseeded from each "game" message's "seed", so a game replays the same way.
//
// Warm-up: the referee freezes the bot right after its hello reply and after each reply, and the JIT
// compiles on background threads. Started cold, the first moves would run interpreted, and the
// compilation they queue would run on the moves' clocks (and, on one core, in their way). So before
// answering hello the bot plays made-up games (every variant and phase, a long game_over, a message
// type it does not know) through its real path: a file read with the same stream classes as stdin,
// the parser, the policy, a writer to /dev/null. It plays for at least WARMUP_MS (400 ms), then until
// the threads other than its own (the compilers) have been quiet for QUIET_MS (50 ms), for at most
// WARMUP_CAP_MS (1 s) and never more than a quarter of the startup budget (hello's time_ms). It says
// how long on stderr. Some compilation is still left to the first moves: the real games take paths
// and reach sizes the made-up ones did not.
//
// Crash mode, for tests: with the environment variable DURAK_SAMPLE_CRASH=1 the bot throws an
// IllegalStateException("sample crash: ...") at its first request. The main loop wraps it with the
// request it failed on, so stderr shows "Exception in thread "main" java.lang.RuntimeException: ..."
// and "Caused by: java.lang.IllegalStateException: sample crash: ...", and the JVM exits with status 1.

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.sun.management.OperatingSystemMXBean;
import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

public final class Bot {
    static final String RANKS = "23456789TJQKA"; // T is the ten
    static final int TRUMP_BONUS = 100; // any trump is worth more than any plain card
    static final int BIG_STOCK = 12; // "early in the game": at least this many cards left to draw
    static final int LONG_GAME = 250; // own decisions: a game this long is probably going round in circles
    static final long WARMUP_MS = 400; // the warm-up plays made-up games for at least this long,
    static final long WARMUP_CAP_MS = 1000; // at most this long (and a quarter of the startup budget),
    static final long QUIET_MS = 50; // and stops once the JIT was quiet for this long

    private final boolean crash;
    private final Random rng = new Random(0); // reseeded from each game's seed: the same game, the same choices
    private String variant = "podkidnoy";
    private int moves;
    private boolean shutdown;

    Bot(boolean crash) {
        this.crash = crash;
    }

    // --- the policy -----------------------------------------------------------------------------

    /** How much a card is worth keeping. In fools_fool diamonds are trump. */
    static int worth(String card, char trump) {
        if (card.length() < 2) {
            return 0;
        }
        return Math.max(RANKS.indexOf(card.charAt(0)), 0) + (card.charAt(1) == trump ? TRUMP_BONUS : 0);
    }

    static String kindOf(String action) {
        int space = action.indexOf(' ');
        return space < 0 ? action : action.substring(0, space);
    }

    /** The policy for one request: its view and legal actions, and the game's variant. */
    static final class Policy {
        private final JsonObject view;
        private final List<String> legal;
        private final boolean chase;
        private final boolean foolsFool;
        private final char trump;

        Policy(JsonObject view, List<String> legal, String variant) {
            this.view = view;
            this.legal = legal;
            this.chase = variant.equals("chase");
            this.foolsFool = variant.equals("fools_fool");
            String suit = stringField(view, "trump_suit", "D");
            this.trump = suit.isEmpty() ? 'D' : suit.charAt(0);
        }

        List<String> ofKind(String kind) {
            List<String> out = new ArrayList<>();
            for (String action : legal) {
                if (kindOf(action).equals(kind)) {
                    out.add(action);
                }
            }
            return out;
        }

        /** The worth of the dearest card an action gives up (for "beat T C", only C). */
        int cost(String action) {
            String[] words = action.split(" ");
            int best = 0;
            for (int i = words[0].equals("beat") ? 2 : 1; i < words.length; i++) {
                best = Math.max(best, worth(words[i], trump));
            }
            return best;
        }

        /** Chase Durak: laying k >= 2 cards at once scores k / 2 chases, and the fewest chases lose. */
        int chases(String action) {
            return chase ? (action.split(" ").length - 1) / 2 : 0;
        }

        /** Most chases first (chase only), then the cheapest cards, then as many of them as possible. */
        String cheapest(List<String> actions) {
            Comparator<String> order = Comparator.<String>comparingInt(a -> -chases(a))
                    .thenComparingInt(this::cost)
                    .thenComparingInt(a -> -a.split(" ").length);
            String best = actions.get(0);
            for (String action : actions) {
                if (order.compare(action, best) < 0) {
                    best = action;
                }
            }
            return best;
        }

        List<JsonArray> table() {
            List<JsonArray> pairs = new ArrayList<>();
            JsonElement table = view.get("table");
            if (table != null && table.isJsonArray()) {
                for (JsonElement pair : table.getAsJsonArray()) {
                    if (pair.isJsonArray()) {
                        pairs.add(pair.getAsJsonArray());
                    }
                }
            }
            return pairs;
        }

        /** Can every unbeaten table card get a beating card of its own? Greedy: dearest target first. */
        boolean canBeatAll() {
            Map<String, List<String>> beaters = new HashMap<>();
            for (String action : ofKind("beat")) {
                String[] words = action.split(" ");
                beaters.computeIfAbsent(words[1], k -> new ArrayList<>()).add(words[2]);
            }
            List<String> unbeaten = new ArrayList<>();
            for (JsonArray pair : table()) {
                if (pair.size() >= 2 && pair.get(0).isJsonPrimitive() && pair.get(1).isJsonNull()) {
                    unbeaten.add(pair.get(0).getAsString());
                }
            }
            unbeaten.sort(Comparator.comparingInt(card -> -worth(card, trump))); // List.sort is stable
            Set<String> used = new HashSet<>();
            for (String target : unbeaten) {
                String pick = null;
                for (String card : beaters.getOrDefault(target, List.of())) {
                    if (!used.contains(card) && (pick == null || worth(card, trump) < worth(pick, trump))) {
                        pick = card;
                    }
                }
                if (pick == null) {
                    return false;
                }
                used.add(pick);
            }
            return true;
        }

        /** The action to play: always one string of legal. */
        String choose() {
            if (foolsFool) {
                // Lead the cheapest card; beat the pile's top with the cheapest card that can.
                List<String> plays = ofKind("lead");
                if (plays.isEmpty()) {
                    plays = ofKind("beat-top");
                }
                return plays.isEmpty() ? legal.get(0) : cheapest(plays);
            }
            int stock = intField(view, "stock", 0);
            boolean early = stock >= BIG_STOCK;

            // Attacking: the lowest rank, with every plain card of it.
            List<String> attacks = ofKind("attack");
            if (!attacks.isEmpty()) {
                return cheapest(attacks);
            }

            // Throwing in: "pass" and any throws.
            if (legal.contains("pass")) {
                List<String> throwIns = ofKind("throw");
                if (throwIns.isEmpty()) {
                    return "pass";
                }
                String best = cheapest(throwIns);
                if (chase) { // a single card scores nothing: keep it, it may make a pair later
                    return chases(best) > 0 ? best : "pass";
                }
                if (stock == 0 || cost(best) < (early ? RANKS.indexOf('J') : TRUMP_BONUS)) {
                    return best;
                }
                return "pass";
            }

            // Defending: transfer when that is cheaper than beating; else beat as cheaply as possible, or take.
            List<String> beats = ofKind("beat");
            beats.sort(Comparator.<String>comparingInt(this::cost)
                    .thenComparingInt(a -> -worth(a.split(" ")[1], trump)));
            String transfer = null;
            for (String candidate : ofKind("transfer")) {
                if (transfer == null || cost(candidate) < cost(transfer)) {
                    transfer = candidate;
                }
            }
            if (transfer != null && (beats.isEmpty() || cost(transfer) < cost(beats.get(0)))
                    && (cost(transfer) < TRUMP_BONUS || !early)) {
                return transfer; // the attack moves on; early on, never give up a trump for that
            }
            if (!legal.contains("take")) {
                return beats.isEmpty() ? legal.get(0) : beats.get(0);
            }
            if (beats.isEmpty() || !canBeatAll()) {
                return "take"; // some card would stay unbeaten anyway: take now instead of spending cards
            }
            String beat = beats.get(0);
            String beatingCard = beat.split(" ")[2];
            if (early && worth(beatingCard, trump) >= TRUMP_BONUS + RANKS.indexOf('T') && table().size() <= 2) {
                return "take"; // a card or two is cheap to take back; a high trump is not worth spending yet
            }
            return beat;
        }
    }

    // --- messages -------------------------------------------------------------------------------

    static String stringField(JsonObject object, String key, String otherwise) {
        JsonElement value = object.get(key);
        return value != null && value.isJsonPrimitive() ? value.getAsString() : otherwise;
    }

    static int intField(JsonObject object, String key, int otherwise) {
        JsonElement value = object.get(key);
        return value != null && value.isJsonPrimitive() && value.getAsJsonPrimitive().isNumber()
                ? value.getAsInt() : otherwise;
    }

    /** One line from the referee as a JSON object, or null (reported on stderr) if it is none. */
    static JsonObject parse(String line) {
        try {
            JsonElement parsed = JsonParser.parseString(line);
            return parsed.isJsonObject() ? parsed.getAsJsonObject() : null;
        } catch (JsonParseException error) {
            System.err.println("Bot.java: ignoring a line that is not JSON: " + error.getMessage());
            return null;
        }
    }

    /** The reply line to one message, or null when it needs none. */
    String answer(JsonObject message) {
        JsonObject reply = new JsonObject();
        switch (stringField(message, "type", "")) {
            case "hello":
                reply.addProperty("type", "hello");
                reply.addProperty("protocol", 2);
                reply.addProperty("name", "heuristic-java");
                reply.addProperty("version", "1.0");
                return reply.toString();
            case "game":
                JsonElement rules = message.get("rules");
                variant = rules != null && rules.isJsonObject()
                        ? stringField(rules.getAsJsonObject(), "variant", "podkidnoy") : "podkidnoy";
                moves = 0;
                JsonElement seed = message.get("seed");
                rng.setSeed(seed != null && seed.isJsonPrimitive() ? seed.getAsLong() : 0L);
                return null;
            case "request":
                if (crash) {
                    throw new IllegalStateException("sample crash: DURAK_SAMPLE_CRASH=1 crashes the bot at its first request");
                }
                List<String> legal = new ArrayList<>();
                for (JsonElement action : message.getAsJsonArray("legal")) {
                    legal.add(action.getAsString());
                }
                String action;
                if (++moves > LONG_GAME && rng.nextDouble() < 0.2) {
                    // Fixed rules can loop forever until the action cap calls a draw: a random move breaks the loop.
                    action = legal.get(rng.nextInt(legal.size()));
                } else {
                    action = new Policy(message.getAsJsonObject("view"), legal, variant).choose();
                }
                reply.addProperty("type", "action");
                reply.add("id", message.get("id"));
                reply.addProperty("action", action);
                return reply.toString();
            case "shutdown":
                shutdown = true;
                return null;
            default: // game_over, and any message type this bot does not know, needs no reply
                return null;
        }
    }

    // --- warm-up ----------------------------------------------------------------------------------

    static final String SUITS = "CDHS";

    static String card(Random random) {
        return "" + RANKS.charAt(4 + random.nextInt(9)) + SUITS.charAt(random.nextInt(4));
    }

    static String cards(List<String> cards) {
        StringBuilder out = new StringBuilder("[");
        for (String card : cards) {
            out.append(out.length() > 1 ? "," : "").append('"').append(card).append('"');
        }
        return out.append(']').toString();
    }

    /** A made-up referee line of each kind a game has. Its actions need not be legal by the rules: the
     *  policy only ever picks among them, and what matters here is that every path of it runs. */
    static void randomGame(Random random, StringBuilder out) {
        String variant = new String[] {"podkidnoy", "perevodnoy", "chase", "fools_fool"}[random.nextInt(4)];
        boolean foolsFool = variant.equals("fools_fool");
        String trump = foolsFool ? "D" : "" + SUITS.charAt(random.nextInt(4));
        out.append("{\"type\":\"game\",\"game\":\"w\",\"seat\":0,\"players\":2,\"names\":[\"a\",\"b\"],")
                .append("\"rules\":{\"variant\":\"").append(variant).append("\",\"deck\":36,\"max_actions\":5000,")
                .append("\"ask_forced_passes\":true,\"allow_transfer\":null},\"dealer\":1,\"seed\":")
                .append(random.nextLong() >>> 1).append("}\n");
        for (int move = 0; move < 30; move++) {
            List<String> hand = new ArrayList<>();
            for (int i = 1 + random.nextInt(10); i > 0; i--) {
                hand.add(card(random));
            }
            List<String> legal = new ArrayList<>();
            List<String> table = new ArrayList<>();
            String phase;
            int kind = random.nextInt(foolsFool ? 2 : 3);
            if (foolsFool) {
                phase = kind == 0 ? "lead" : "beat";
                for (String card : hand) {
                    legal.add((kind == 0 ? "lead " : "beat-top ") + card);
                }
            } else if (kind == 0) {
                phase = "lead";
                for (String card : hand) {
                    legal.add("attack " + card);
                }
                legal.add("attack " + hand.get(0) + " " + card(random));
            } else if (kind == 1) {
                phase = "defend";
                for (int i = 1 + random.nextInt(4); i > 0; i--) {
                    String attack = card(random);
                    boolean beaten = random.nextInt(3) == 0;
                    table.add("[\"" + attack + "\"," + (beaten ? "\"" + card(random) + "\"" : "null") + "]");
                    for (String card : hand) {
                        if (!beaten && random.nextBoolean()) {
                            legal.add("beat " + attack + " " + card);
                        }
                    }
                }
                if (random.nextBoolean()) {
                    legal.add("transfer " + hand.get(0));
                }
                legal.add("take");
            } else {
                phase = "throw";
                table.add("[\"" + card(random) + "\",\"" + card(random) + "\"]");
                for (String card : hand) {
                    if (random.nextBoolean()) {
                        legal.add("throw " + card);
                    }
                }
                if (legal.size() >= 2) {
                    legal.add("throw " + legal.get(0).substring(6) + " " + legal.get(1).substring(6));
                }
                legal.add("pass");
            }
            if (legal.isEmpty()) {
                legal.add(foolsFool ? "lead " + hand.get(0) : "take");
            }
            out.append("{\"type\":\"request\",\"id\":").append(1 + random.nextInt(1 << 30))
                    .append(",\"game\":\"w\",\"view\":{\"seat\":0,\"phase\":\"").append(phase)
                    .append("\",\"to_move\":0,\"hand\":").append(cards(hand)).append(",\"hand_sizes\":[")
                    .append(hand.size()).append(",6],\"known\":[[],[\"").append(card(random))
                    .append("\"]],\"trump_suit\":\"").append(trump).append("\",\"trump\":")
                    .append(foolsFool ? "null" : "\"A" + trump + "\"").append(",\"stock\":").append(random.nextInt(25))
                    .append(",\"table\":[").append(String.join(",", table)).append("],\"attacker\":1,\"defender\":0,")
                    .append("\"taking\":").append(random.nextBoolean()).append(",\"bout_limit\":6,\"pile\":[],")
                    .append("\"pile_limit\":null,\"discard\":").append(cards(hand.subList(0, 1)))
                    .append(",\"out\":[],\"chases\":").append(variant.equals("chase") ? "[0,1]" : "null")
                    .append("},\"legal\":").append(cards(legal)).append(",\"time_ms\":1000,\"events\":[")
                    .append("{\"type\":\"action\",\"seat\":1,\"action\":\"attack ").append(card(random))
                    .append("\"},{\"type\":\"draw\",\"seat\":1,\"count\":2,\"cards\":null,\"shown\":[]},")
                    .append("{\"type\":\"bout_end\",\"outcome\":\"taken\",\"defender\":0,\"cards\":")
                    .append(cards(hand)).append("}]}\n");
        }
        out.append("{\"type\":\"game_over\",\"game\":\"w\",\"result\":{\"order\":[[1],[0]],\"fools\":[0],")
                .append("\"end\":\"fool\",\"chases\":null,\"forfeit_seat\":null},\"events\":[");
        for (int i = 0; i < 50; i++) {
            out.append(i == 0 ? "" : ",").append("{\"type\":\"out\",\"seats\":[1],\"place\":1}");
        }
        out.append("]}\n{\"type\":\"from_the_future\",\"data\":{\"list\":[1,\"]}\\\"\",null],\"ok\":true}}\n");
    }

    /** Runs the bot's own hot paths so the JIT compiles them now, not on a move's clock (see the header):
     *  made-up games go through the same reader, parser, policy and writer as the referee's lines. */
    static void warmUp(long budgetMs) {
        long start = System.nanoTime();
        long minimum = start + WARMUP_MS * 1_000_000L;
        long cap = start + Math.min(WARMUP_CAP_MS, budgetMs / 4) * 1_000_000L;
        Random random = new Random(1);
        StringBuilder corpus = new StringBuilder("{\"type\":\"hello\",\"protocol\":2,\"referee\":\"w\",\"time_ms\":1}\n");
        for (int game = 0; game < 4; game++) {
            randomGame(random, corpus);
        }
        // Through a file and /dev/null, so that the reader and writer see the same stream classes as stdin
        // and stdout do (other classes there would undo compiled code at the first real line).
        File input = null;
        long rounds = 0;
        try {
            File tmp = new File(System.getenv().getOrDefault("TMPDIR", "/tmp"));
            input = File.createTempFile("durak-warm-up", ".jsonl", tmp);
            try (Writer file = new OutputStreamWriter(new FileOutputStream(input), StandardCharsets.UTF_8)) {
                file.write(corpus.toString());
            }
            // Play them for WARMUP_MS, then on until the JIT has gone quiet: the threads other than this
            // one (the compilers, the GC) used under a tenth of a QUIET_MS window while the games kept
            // running (a busy compiler raises its thresholds, so methods keep being queued for a while).
            OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            long window = start;
            long processCpu = os.getProcessCpuTime();
            long ownCpu = threads.getCurrentThreadCpuTime();
            try (Writer sink = new BufferedWriter(
                    new OutputStreamWriter(new FileOutputStream("/dev/null"), StandardCharsets.UTF_8))) {
                for (long now = start; now < cap; now = System.nanoTime()) {
                    if (now - window >= QUIET_MS * 1_000_000L) {
                        long processNow = os.getProcessCpuTime();
                        long ownNow = threads.getCurrentThreadCpuTime();
                        if (now >= minimum && ((processNow - processCpu) - (ownNow - ownCpu)) * 10 < now - window) {
                            break;
                        }
                        window = now;
                        processCpu = processNow;
                        ownCpu = ownNow;
                    }
                    try (InputStream in = new BufferedInputStream(new FileInputStream(input))) {
                        serve(new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)), sink, new Bot(false),
                                null);
                    }
                    rounds++;
                }
            }
        } catch (IOException error) {
            System.err.println("Bot.java: warm-up cut short: " + error);
        } finally {
            if (input != null) {
                input.delete();
            }
        }
        // No printf or string concatenation here: their machinery would be compiled, and code compiled
        // before deoptimized, on the first move's clock.
        StringBuilder note = new StringBuilder("Bot.java: warmed up in ");
        note.append((System.nanoTime() - start) / 1_000_000).append(" ms (").append(rounds).append(" rounds of ")
                .append(corpus.chars().filter(c -> c == '\n').count()).append(" lines)");
        System.err.println(note);
    }

    // --- main -------------------------------------------------------------------------------------

    /** Answers the lines of in on out until EOF or shutdown. Before its first hello reply it runs
     *  warmUp (none when warmUp is null). */
    static void serve(BufferedReader in, Writer out, Bot bot, WarmUp warmUp) throws IOException {
        for (String line; !bot.shutdown && (line = in.readLine()) != null; ) {
            if (line.isBlank()) {
                continue;
            }
            JsonObject message = parse(line);
            if (message == null) {
                continue;
            }
            String reply;
            try {
                if (warmUp != null && "hello".equals(stringField(message, "type", ""))) {
                    warmUp.run(intField(message, "time_ms", 10_000));
                    warmUp = null;
                }
                reply = bot.answer(message);
            } catch (RuntimeException error) {
                String start = line.length() > 80 ? line.substring(0, 80) + "..." : line;
                throw new RuntimeException("Bot.java failed on the line " + start, error);
            }
            if (reply != null) {
                out.write(reply);
                out.write('\n');
                out.flush(); // the referee is waiting for the whole line
            }
        }
    }

    interface WarmUp {
        void run(long budgetMs);
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Writer out = new BufferedWriter(new OutputStreamWriter(new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8));
        serve(in, out, new Bot("1".equals(System.getenv("DURAK_SAMPLE_CRASH"))), Bot::warmUp);
    }
}
