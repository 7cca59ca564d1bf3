/* bot.c - a Durak bot in one C99 file, libc only: it answers every request with a random legal action.
 *
 * Build:  gcc -O2 -std=c99 -Wall -Wextra -o bot bot.c
 * Run:    .venv/bin/durak play "c=./sample_bots/c/bot" "{python} sample_bots/python/random_bot.py"
 *         (it reseeds its choices from each game's "seed", so a game replays the same way)
 * Crash mode, for tests: with the environment variable DURAK_SAMPLE_CRASH=1 it aborts at its first
 *         request, after saying why on stderr.
 *
 * Protocol: one JSON object per line each way. The bot needs only four fields of what it reads:
 * "type" (hello, game, request, game_over, shutdown), of a game its "seed", and of a request its "id"
 * and its "legal" array of action strings. It answers hello with its own hello and a request with
 * {"type":"action","id":ID,"action":"ONE OF legal"}; it exits on shutdown and ignores the rest.
 *
 * The scanner below is not a JSON parser. It assumes that:
 *   - each line holds one JSON object (a line that is not one is reported on stderr and ignored);
 *   - the object's keys and the strings of "legal" contain no escapes (true of the protocol: keys are
 *     plain names and actions are like "beat 6S 8S");
 *   - "id" is an integer.
 * It allows any whitespace and any key order, and skips every other value, whatever it holds:
 * nested objects and arrays (the "view"), strings with escapes, numbers, true, false and null.
 */
#define _POSIX_C_SOURCE 200809L /* for getline and getpid */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char type[32];   /* the message type, "" if missing */
    long long id;    /* the request id */
    unsigned long long seed; /* a game's seed for the bot's own randomness */
    char **legal;    /* the legal action strings, pointing into the line buffer */
    size_t n_legal, cap_legal;
} Message;

static char *skip_ws(char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    return p;
}

/* p is at an opening quote: return the char after the closing quote, or NULL if the line ends first. */
static char *skip_string(char *p) {
    for (p++; *p; p++) {
        if (*p == '\\' && p[1]) p++; /* skip the escaped char, which may be a quote */
        else if (*p == '"') return p + 1;
    }
    return NULL;
}

/* Skip one value of an object member: return the ',' or '}' that ends it, or NULL. */
static char *skip_value(char *p) {
    int depth = 0; /* open objects and arrays inside the value */
    while (*p) {
        if (*p == '"') {
            if (!(p = skip_string(p))) return NULL;
            continue;
        }
        if (*p == '{' || *p == '[') depth++;
        else if ((*p == '}' || *p == ']') && depth-- == 0) return p;
        else if (*p == ',' && depth == 0) return p;
        p++;
    }
    return NULL;
}

/* p is at '[': store the array's strings in m->legal (ending each with a NUL in place). */
static char *read_legal(char *p, Message *m) {
    p = skip_ws(p + 1);
    while (*p == '"') {
        char *start = p + 1;
        if (!(p = skip_string(p))) return NULL;
        p[-1] = '\0'; /* the closing quote: the string ends here */
        if (m->n_legal == m->cap_legal) {
            size_t cap = m->cap_legal ? 2 * m->cap_legal : 64;
            char **grown = realloc(m->legal, cap * sizeof *grown);
            if (!grown) return NULL;
            m->legal = grown;
            m->cap_legal = cap;
        }
        m->legal[m->n_legal++] = start;
        p = skip_ws(p);
        if (*p == ',') p = skip_ws(p + 1);
    }
    return *p == ']' ? p + 1 : NULL;
}

/* Scan one line into m: 0 on success, -1 if it is not an object this scanner understands. */
static int scan(char *p, Message *m) {
    m->type[0] = '\0';
    m->id = -1;
    m->n_legal = 0;
    p = skip_ws(p);
    if (*p++ != '{') return -1;
    for (;;) {
        p = skip_ws(p);
        if (*p == '}') return 0;
        if (*p != '"') return -1;
        char *key = p + 1;
        if (!(p = skip_string(p))) return -1;
        size_t key_len = (size_t)(p - 1 - key);
        p = skip_ws(p);
        if (*p++ != ':') return -1;
        p = skip_ws(p);
        if (key_len == 4 && !strncmp(key, "type", 4) && *p == '"') {
            char *start = p + 1;
            if (!(p = skip_string(p))) return -1;
            size_t len = (size_t)(p - 1 - start);
            if (len >= sizeof m->type) len = sizeof m->type - 1; /* a long unknown type: truncated */
            memcpy(m->type, start, len);
            m->type[len] = '\0';
        } else if (key_len == 2 && !strncmp(key, "id", 2)) {
            char *end;
            m->id = strtoll(p, &end, 10);
            if (end == p) return -1;
            p = end;
        } else if (key_len == 4 && !strncmp(key, "seed", 4)) {
            char *end;
            m->seed = strtoull(p, &end, 10);
            if (end == p) return -1;
            p = end;
        } else if (key_len == 5 && !strncmp(key, "legal", 5) && *p == '[') {
            p = read_legal(p, m);
        } else {
            p = skip_value(p);
        }
        if (!p) return -1;
        p = skip_ws(p);
        if (*p == ',') p++;
        else if (*p != '}') return -1;
    }
}

int main(void) {
    Message m = {0};
    char *line = NULL;
    size_t line_cap = 0;
    const char *crash_mode = getenv("DURAK_SAMPLE_CRASH");
    int crash = crash_mode != NULL && !strcmp(crash_mode, "1");
    while (getline(&line, &line_cap, stdin) != -1) {
        if (scan(line, &m) != 0) {
            fprintf(stderr, "bot.c: ignoring a line it cannot scan\n");
            continue;
        }
        if (!strcmp(m.type, "hello")) {
            printf("{\"type\":\"hello\",\"protocol\":2,\"name\":\"c-random\",\"version\":\"1.0\"}\n");
        } else if (!strcmp(m.type, "request") && crash) {
            fprintf(stderr, "bot.c: sample crash: DURAK_SAMPLE_CRASH=1 crashes the bot at its first request\n");
            abort();
        } else if (!strcmp(m.type, "request") && m.n_legal > 0) {
            /* The legal strings hold no quotes or backslashes, so they are copied out as they are. */
            printf("{\"type\":\"action\",\"id\":%lld,\"action\":\"%s\"}\n", m.id, m.legal[(size_t)rand() % m.n_legal]);
        } else if (!strcmp(m.type, "game")) {
            srand((unsigned)(m.seed ^ (m.seed >> 32))); /* the same game, the same choices */
        } else if (!strcmp(m.type, "shutdown")) {
            break;
        } /* game, game_over and newer message types need no reply */
        fflush(stdout); /* stdout is a pipe, so fully buffered: each answer must go out now */
    }
    free(m.legal);
    free(line);
    return 0;
}
