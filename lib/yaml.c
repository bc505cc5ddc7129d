/* YAML documents as a read-only tree with file and line on every node (see
 * sensim/yaml.h), built from libyaml's event API so that each node keeps the
 * start mark of its event.
 *
 * Aliases share the anchored node (no copying, so an "alias bomb" costs no
 * memory); an anchor becomes visible only once its node is complete, so a
 * node cannot contain itself and the tree has no cycles. Every node is also
 * on the document's allocation list, which is how they are freed. */
#include "sensim/yaml.h"

#include "sensim/afile.h"
#include "base_internal.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

struct sensim_ynode {
    sensim_ynode_kind kind;
    int line;
    int plain;          /* scalar written without quotes (so "~" or "" means null) */
    const char *file;   /* the document's name */
    char *text;         /* scalar text */
    size_t n, cap, kcap;
    sensim_ynode **items; /* sequence items or mapping values */
    sensim_ynode **keys;  /* mapping keys (scalar nodes) */
    sensim_ynode *next_alloc;
};

struct sensim_yaml {
    char *name;
    char *text;
    size_t len;
    sensim_ynode *root;
    sensim_ynode *all; /* allocation list */
};

typedef struct anchor {
    char *name;
    sensim_ynode *node;
} anchor;

typedef struct frame {
    sensim_ynode *node;
    sensim_ynode *key; /* pending key of a mapping, or NULL */
    char *anchor;      /* registered when the container closes */
} frame;

typedef struct builder {
    sensim_yaml *doc;
    frame *stack;
    size_t depth, stack_cap;
    anchor *anchors;
    size_t nanchors, anchors_cap;
} builder;

static sensim_ynode *node_new(sensim_yaml *doc, sensim_ynode_kind kind, int line)
{
    sensim_ynode *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->kind = kind;
    n->line = line;
    n->file = doc->name;
    n->next_alloc = doc->all;
    doc->all = n;
    return n;
}

static int is_null_scalar(const sensim_ynode *n)
{
    return n->kind == SENSIM_YNODE_SCALAR && n->plain &&
           (!n->text[0] || !strcmp(n->text, "~") || !strcmp(n->text, "null") || !strcmp(n->text, "Null") ||
            !strcmp(n->text, "NULL"));
}

static sensim_status oom(void) { return sensim_error(SENSIM_ENOMEM, "yaml: out of memory"); }

static sensim_status define_anchor(builder *b, char *name, sensim_ynode *node)
{
    for (size_t i = 0; i < b->nanchors; i++)
        if (!strcmp(b->anchors[i].name, name)) {
            /* YAML lets a later anchor of the same name replace an earlier one. */
            free(b->anchors[i].name);
            b->anchors[i].name = name;
            b->anchors[i].node = node;
            return SENSIM_OK;
        }
    if (sensim_reserve_(&b->anchors, &b->anchors_cap, b->nanchors + 1, sizeof *b->anchors, 8)) {
        free(name);
        return oom();
    }
    b->anchors[b->nanchors].name = name;
    b->anchors[b->nanchors].node = node;
    b->nanchors++;
    return SENSIM_OK;
}

/* Attaches a finished node to the open container (or makes it the root). */
static sensim_status attach(builder *b, sensim_ynode *node)
{
    sensim_yaml *doc = b->doc;
    if (b->depth == 0) {
        doc->root = node;
        return SENSIM_OK;
    }
    frame *f = &b->stack[b->depth - 1];
    sensim_ynode *c = f->node;
    if (c->kind == SENSIM_YNODE_SEQUENCE) {
        if (sensim_reserve_(&c->items, &c->cap, c->n + 1, sizeof *c->items, 8))
            return oom();
        c->items[c->n++] = node;
        return SENSIM_OK;
    }
    if (!f->key) {
        if (node->kind != SENSIM_YNODE_SCALAR)
            return sensim_error(SENSIM_EUNSUPPORTED, "%s:%d: mapping keys must be scalars", doc->name, node->line);
        if (node->plain && !strcmp(node->text, "<<"))
            return sensim_error(SENSIM_EUNSUPPORTED,
                                "%s:%d: merge keys ('<<') are not supported; write the keys out", doc->name,
                                node->line);
        for (size_t i = 0; i < c->n; i++)
            if (!strcmp(c->keys[i]->text, node->text))
                return sensim_error(SENSIM_EFORMAT, "%s:%d: duplicate key '%s' (first at line %d)", doc->name,
                                    node->line, node->text, c->keys[i]->line);
        f->key = node;
        return SENSIM_OK;
    }
    if (sensim_reserve_(&c->items, &c->cap, c->n + 1, sizeof *c->items, 8) ||
        sensim_reserve_(&c->keys, &c->kcap, c->n + 1, sizeof *c->keys, 8))
        return oom();
    c->keys[c->n] = f->key;
    c->items[c->n] = node;
    c->n++;
    f->key = NULL;
    return SENSIM_OK;
}


static sensim_status syntax_error(const sensim_yaml *doc, const yaml_parser_t *p)
{
    if (p->error == YAML_MEMORY_ERROR)
        return oom();
    if (p->error == YAML_READER_ERROR)
        return sensim_error(SENSIM_EFORMAT, "%s: byte %zu: %s", doc->name, p->problem_offset,
                            p->problem ? p->problem : "cannot read");
    const char *problem = p->problem ? p->problem : "syntax error";
    if (p->context)
        return sensim_error(SENSIM_EFORMAT, "%s:%zu:%zu: %s (%s started at line %zu)", doc->name,
                            p->problem_mark.line + 1, p->problem_mark.column + 1, problem, p->context,
                            p->context_mark.line + 1);
    return sensim_error(SENSIM_EFORMAT, "%s:%zu:%zu: %s", doc->name, p->problem_mark.line + 1,
                        p->problem_mark.column + 1, problem);
}

static sensim_status build(builder *b, yaml_parser_t *p)
{
    sensim_yaml *doc = b->doc;
    yaml_event_t ev;
    for (;;) {
        if (!yaml_parser_parse(p, &ev))
            return syntax_error(doc, p);
        sensim_status st = SENSIM_OK;
        int line = (int)ev.start_mark.line + 1;
        sensim_ynode *node = NULL;
        const char *anchor_name = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            yaml_event_delete(&ev);
            return SENSIM_OK;
        case YAML_DOCUMENT_START_EVENT:
            break;
        case YAML_DOCUMENT_END_EVENT:
            /* Only the first document is loaded. */
            yaml_event_delete(&ev);
            return SENSIM_OK;
        case YAML_SCALAR_EVENT:
            node = node_new(doc, SENSIM_YNODE_SCALAR, line);
            if (!node || !(node->text = strdup((const char *)ev.data.scalar.value))) {
                st = oom();
                break;
            }
            node->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
            anchor_name = (const char *)ev.data.scalar.anchor;
            break;
        case YAML_ALIAS_EVENT: {
            const char *a = (const char *)ev.data.alias.anchor;
            for (size_t i = 0; i < b->nanchors && !node; i++)
                if (!strcmp(b->anchors[i].name, a))
                    node = b->anchors[i].node;
            if (!node)
                st = sensim_error(SENSIM_EFORMAT, "%s:%d:%zu: undefined alias '*%s'", doc->name, line,
                                  ev.start_mark.column + 1, a);
            break;
        }
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT: {
            int seq = ev.type == YAML_SEQUENCE_START_EVENT;
            sensim_ynode *c = node_new(doc, seq ? SENSIM_YNODE_SEQUENCE : SENSIM_YNODE_MAPPING, line);
            const char *a = (const char *)(seq ? ev.data.sequence_start.anchor : ev.data.mapping_start.anchor);
            if (!c || sensim_reserve_(&b->stack, &b->stack_cap, b->depth + 1, sizeof *b->stack, 8)) {
                st = oom();
                break;
            }
            frame *f = &b->stack[b->depth++];
            f->node = c;
            f->key = NULL;
            f->anchor = NULL;
            if (a && !(f->anchor = strdup(a)))
                st = oom();
            break;
        }
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: {
            frame f = b->stack[--b->depth];
            node = f.node;
            if (f.anchor)
                st = define_anchor(b, f.anchor, node);
            break;
        }
        default:
            break;
        }
        if (!st && anchor_name) {
            char *a = strdup(anchor_name);
            st = a ? define_anchor(b, a, node) : oom();
        }
        if (!st && node)
            st = attach(b, node);
        yaml_event_delete(&ev);
        if (st)
            return st;
    }
}

sensim_yaml *sensim_yaml_load_string(const char *text, size_t len, const char *name)
{
    if (!name)
        name = "<string>";
    if (!text) {
        sensim_error(SENSIM_EINVAL, "%s: no text", name);
        return NULL;
    }
    sensim_yaml *doc = calloc(1, sizeof *doc);
    builder b = {0};
    yaml_parser_t parser;
    int parser_ok = 0;
    sensim_status st = SENSIM_OK;
    if (!doc || !(doc->name = strdup(name)) || !(doc->text = malloc(len + 1))) {
        st = oom();
        goto done;
    }
    memcpy(doc->text, text, len);
    doc->text[len] = '\0';
    doc->len = len;
    b.doc = doc;
    if (!yaml_parser_initialize(&parser)) {
        st = oom();
        goto done;
    }
    parser_ok = 1;
    yaml_parser_set_input_string(&parser, (const unsigned char *)doc->text, len);
    st = build(&b, &parser);
    if (!st && !doc->root) {
        /* An empty stream is a null document: a null scalar at line 1. */
        sensim_ynode *n = node_new(doc, SENSIM_YNODE_SCALAR, 1);
        if (!n || !(n->text = strdup(""))) {
            st = oom();
            goto done;
        }
        n->plain = 1;
        doc->root = n;
    }
done:
    if (parser_ok)
        yaml_parser_delete(&parser);
    for (size_t i = 0; i < b.depth; i++)
        free(b.stack[i].anchor);
    free(b.stack);
    for (size_t i = 0; i < b.nanchors; i++)
        free(b.anchors[i].name);
    free(b.anchors);
    if (st) {
        sensim_yaml_free(doc);
        return NULL;
    }
    return doc;
}

sensim_yaml *sensim_yaml_load_file(const char *path)
{
    if (!path) {
        sensim_error(SENSIM_EINVAL, "yaml: no file name");
        return NULL;
    }
    /* A regular file of at most 64 MiB: a rig, scene or lidar definition
     * naming a FIFO or /dev/zero must fail, not block or grow for ever. */
    FILE *f = sensim_input_fopen(path, SENSIM_YAML_MAX_BYTES);
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap)
            break;
        char *nb = realloc(buf, cap *= 2);
        if (!nb)
            free(buf);
        buf = nb;
    }
    if (!buf) {
        fclose(f);
        oom();
        return NULL;
    }
    if (ferror(f)) {
        sensim_error(SENSIM_EIO, "%s: cannot read: %s", path, strerror(errno));
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    sensim_yaml *doc = sensim_yaml_load_string(buf, len, path);
    free(buf);
    return doc;
}

void sensim_yaml_free(sensim_yaml *doc)
{
    if (!doc)
        return;
    for (sensim_ynode *n = doc->all, *next; n; n = next) {
        next = n->next_alloc;
        SENSIM_FREE_ALL(n->text, n->items, n->keys, n);
    }
    SENSIM_FREE_ALL(doc->name, doc->text, doc);
}

const char *sensim_yaml_text(const sensim_yaml *doc) { return doc ? doc->text : NULL; }
const char *sensim_yaml_name(const sensim_yaml *doc) { return doc ? doc->name : NULL; }
const sensim_ynode *sensim_yaml_root(const sensim_yaml *doc) { return doc ? doc->root : NULL; }

sensim_ynode_kind sensim_ynode_kind_of(const sensim_ynode *n) { return n->kind; }
int sensim_ynode_line(const sensim_ynode *n) { return n ? n->line : 0; }
const char *sensim_ynode_file(const sensim_ynode *n) { return n ? n->file : NULL; }

const char *sensim_ynode_scalar(const sensim_ynode *n)
{
    return n && n->kind == SENSIM_YNODE_SCALAR ? n->text : NULL;
}

size_t sensim_ynode_size(const sensim_ynode *n) { return n && n->kind != SENSIM_YNODE_SCALAR ? n->n : 0; }

const sensim_ynode *sensim_ynode_item(const sensim_ynode *n, size_t i)
{
    return n && n->kind == SENSIM_YNODE_SEQUENCE && i < n->n ? n->items[i] : NULL;
}

const char *sensim_ynode_key_at(const sensim_ynode *n, size_t i)
{
    return n && n->kind == SENSIM_YNODE_MAPPING && i < n->n ? n->keys[i]->text : NULL;
}

const sensim_ynode *sensim_ynode_value_at(const sensim_ynode *n, size_t i)
{
    return n && n->kind == SENSIM_YNODE_MAPPING && i < n->n ? n->items[i] : NULL;
}

const sensim_ynode *sensim_ynode_get(const sensim_ynode *n, const char *key)
{
    if (!n || n->kind != SENSIM_YNODE_MAPPING || !key)
        return NULL;
    for (size_t i = 0; i < n->n; i++)
        if (!strcmp(n->keys[i]->text, key))
            return n->items[i];
    return NULL;
}

sensim_status sensim_ynode_error(const sensim_ynode *n, sensim_status status, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!n)
        return sensim_error(status, "%s", msg);
    return sensim_error(status, "%s:%d: %s", n->file, n->line, msg);
}

static const char *kind_name(const sensim_ynode *n)
{
    if (n->kind == SENSIM_YNODE_MAPPING)
        return "a mapping";
    if (n->kind == SENSIM_YNODE_SEQUENCE)
        return "a sequence";
    return is_null_scalar(n) ? "nothing (null)" : "a scalar";
}

sensim_status sensim_ynode_check_keys(const sensim_ynode *n, const char *what, const char *const *allowed)
{
    if (!what)
        what = "mapping";
    if (!n)
        return sensim_error(SENSIM_EINVAL, "%s: no mapping", what);
    if (n->kind != SENSIM_YNODE_MAPPING)
        return sensim_ynode_error(n, SENSIM_EINVAL, "%s: expected a mapping, got %s", what, kind_name(n));
    for (size_t i = 0; i < n->n; i++) {
        int ok = 0;
        for (size_t j = 0; allowed && allowed[j] && !ok; j++)
            ok = !strcmp(allowed[j], n->keys[i]->text);
        if (ok)
            continue;
        char list[512] = "";
        size_t at = 0;
        for (size_t j = 0; allowed && allowed[j]; j++) {
            int k = snprintf(list + at, at < sizeof list ? sizeof list - at : 0, "%s%s", j ? ", " : "",
                             allowed[j]);
            if (k > 0)
                at += (size_t)k;
        }
        return sensim_ynode_error(n->keys[i], SENSIM_EINVAL, "unknown key '%s' in %s (expected one of: %s)",
                                  n->keys[i]->text, what, allowed && allowed[0] ? list : "no keys");
    }
    return SENSIM_OK;
}

/* Finds `key` in `map` for a getter. Returns 1 and sets *v when present, 0
 * when absent and optional, -1 on error (message set in *st). */
static int lookup(const sensim_ynode *map, const char *key, int required, const sensim_ynode **v,
                  sensim_status *st)
{
    if (map && map->kind != SENSIM_YNODE_MAPPING) {
        *st = sensim_ynode_error(map, SENSIM_EINVAL, "expected a mapping holding key '%s', got %s", key,
                                 kind_name(map));
        return -1;
    }
    *v = sensim_ynode_get(map, key);
    if (*v)
        return 1;
    if (!required)
        return 0;
    *st = map ? sensim_ynode_error(map, SENSIM_ENOTFOUND, "missing key '%s'", key)
              : sensim_error(SENSIM_ENOTFOUND, "missing key '%s'", key);
    return -1;
}

/* A scalar that is not null, for the typed getters. */
static sensim_status want_scalar(const sensim_ynode *v, const char *what, const char *expected)
{
    if (v->kind != SENSIM_YNODE_SCALAR || is_null_scalar(v))
        return sensim_ynode_error(v, SENSIM_EINVAL, "%s: expected %s, got %s", what, expected, kind_name(v));
    return SENSIM_OK;
}

static void key_what(char *buf, size_t size, const char *key) { snprintf(buf, size, "key '%s'", key); }

/* The value under a key for a typed getter, and "key 'k'" naming it in
 * messages. */
typedef struct typed {
    const sensim_ynode *v;
    char what[160];
    sensim_status st;
} typed;

/* 1 when the key is present (and, when expected is given, holds a non-null
 * scalar, else an error naming the expected type); 0 when absent and
 * optional; -1 with t->st set on an error. */
static int typed_value(const sensim_ynode *map, const char *key, int required, const char *expected, typed *t)
{
    t->st = SENSIM_OK;
    int r = lookup(map, key, required, &t->v, &t->st);
    if (r <= 0)
        return r;
    key_what(t->what, sizeof t->what, key);
    if (expected && (t->st = want_scalar(t->v, t->what, expected)))
        return -1;
    return 1;
}

/* The units module's message ("'x': unknown unit 'y'") under the node's
 * location. */
static sensim_status units_error(const sensim_ynode *v, sensim_status st, const char *what)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", sensim_last_error());
    return sensim_ynode_error(v, st, "%s: %s", what, msg);
}

static sensim_status quantity_of(const sensim_ynode *v, const char *what, sensim_dim dim, double *out)
{
    sensim_status st = want_scalar(v, what, "a number");
    if (st)
        return st;
    double x;
    if ((st = sensim_units_convert(v->text, dim, &x)))
        return units_error(v, st, what);
    *out = x;
    return SENSIM_OK;
}

sensim_status sensim_ynode_as_quantity(const sensim_ynode *n, const char *what, sensim_dim dim, double *out)
{
    if (!n)
        return sensim_error(SENSIM_EINVAL, "%s: no value", what ? what : "value");
    return quantity_of(n, what ? what : "value", dim, out);
}

sensim_status sensim_ynode_get_double(const sensim_ynode *map, const char *key, int required, double *out)
{
    typed t;
    if (typed_value(map, key, required, "a number", &t) <= 0)
        return t.st;
    double x;
    sensim_dim d;
    int has_unit;
    if (sensim_units_parse(t.v->text, &x, &d, &has_unit))
        return units_error(t.v, SENSIM_EINVAL, t.what);
    if (has_unit)
        return sensim_ynode_error(t.v, SENSIM_EINVAL, "%s: expected a plain number, got '%s'", t.what, t.v->text);
    *out = x;
    return SENSIM_OK;
}

static sensim_status range_check(const sensim_ynode *v, const char *what, double x, double lo, double hi)
{
    if (x >= lo && x <= hi)
        return SENSIM_OK;
    if (isfinite(lo) && isfinite(hi))
        return sensim_ynode_error(v, SENSIM_EINVAL, "%s: must be in [%g, %g] (got %g)", what, lo, hi, x);
    if (x < lo)
        return sensim_ynode_error(v, SENSIM_EINVAL, "%s: must be >= %g (got %g)", what, lo, x);
    return sensim_ynode_error(v, SENSIM_EINVAL, "%s: must be <= %g (got %g)", what, hi, x);
}

sensim_status sensim_ynode_get_quantity_range(const sensim_ynode *map, const char *key, sensim_dim dim,
                                              int required, double lo, double hi, double *out)
{
    typed t;
    if (typed_value(map, key, required, NULL, &t) <= 0)
        return t.st;
    double x;
    if ((t.st = quantity_of(t.v, t.what, dim, &x)) || (t.st = range_check(t.v, t.what, x, lo, hi)))
        return t.st;
    *out = x;
    return SENSIM_OK;
}

sensim_status sensim_ynode_get_quantity(const sensim_ynode *map, const char *key, sensim_dim dim, int required,
                                        double *out)
{
    return sensim_ynode_get_quantity_range(map, key, dim, required, -INFINITY, INFINITY, out);
}

/* A decimal integer, signed (a leading '+' or '-') into *s or unsigned (a
 * leading '+') into *u; t names the expected type. */
static sensim_status integer_of(const typed *t, const char *expected, long long *s, uint64_t *u)
{
    const char *text = t->v->text, *p = text + (text[0] == '+' || (s && text[0] == '-'));
    char *end = (char *)p;
    long long x = 0;
    unsigned long long y = 0;
    errno = 0;
    if (*p >= '0' && *p <= '9') {
        if (s)
            x = strtoll(text, &end, 10);
        else
            y = strtoull(p, &end, 10);
    }
    if (end == p || *end)
        return sensim_ynode_error(t->v, SENSIM_EINVAL, "%s: expected %s, got '%s'", t->what, expected, text);
    if (errno == ERANGE)
        return sensim_ynode_error(t->v, SENSIM_EINVAL, "%s: integer out of range: '%s'", t->what, text);
    if (s)
        *s = x;
    else
        *u = (uint64_t)y;
    return SENSIM_OK;
}

sensim_status sensim_ynode_get_int(const sensim_ynode *map, const char *key, int required, long long *out)
{
    typed t;
    if (typed_value(map, key, required, "an integer", &t) <= 0)
        return t.st;
    return integer_of(&t, "an integer", out, NULL);
}

sensim_status sensim_ynode_get_uint64(const sensim_ynode *map, const char *key, int required, uint64_t *out)
{
    typed t;
    if (typed_value(map, key, required, "an unsigned integer", &t) <= 0)
        return t.st;
    return integer_of(&t, "an unsigned integer", NULL, out);
}

sensim_status sensim_ynode_get_bool(const sensim_ynode *map, const char *key, int required, int *out)
{
    typed t;
    if (typed_value(map, key, required, "true or false", &t) <= 0)
        return t.st;
    const char *s = t.v->text;
    if (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "false") || !strcasecmp(s, "no")) {
        *out = !strcasecmp(s, "true") || !strcasecmp(s, "yes");
        return SENSIM_OK;
    }
    return sensim_ynode_error(t.v, SENSIM_EINVAL, "%s: expected true, false, yes or no, got '%s'", t.what, s);
}

sensim_status sensim_ynode_get_string(const sensim_ynode *map, const char *key, int required, const char **out)
{
    typed t;
    if (typed_value(map, key, required, "a string", &t) <= 0)
        return t.st;
    *out = t.v->text;
    return SENSIM_OK;
}

/* The n numbers of sequence v (or, for n = 9, 3 rows of 3: a row-major 3x3
 * matrix) into tmp. */
static sensim_status vector_of(const sensim_ynode *v, const char *what, sensim_dim dim, size_t n, double *tmp)
{
    sensim_status st = SENSIM_OK;
    char w[200];
    if (n == 9 && v->n == 3 && v->items[0]->kind == SENSIM_YNODE_SEQUENCE) {
        for (size_t i = 0; i < 3 && !st; i++) {
            const sensim_ynode *row = v->items[i];
            snprintf(w, sizeof w, "%s row %zu", what, i + 1);
            if (row->kind != SENSIM_YNODE_SEQUENCE || row->n != 3)
                return sensim_ynode_error(row, SENSIM_EINVAL, "%s: expected a row of 3 numbers", w);
            for (size_t j = 0; j < 3 && !st; j++) {
                snprintf(w, sizeof w, "%s[%zu][%zu]", what, i, j);
                st = quantity_of(row->items[j], w, dim, &tmp[3 * i + j]);
            }
        }
        return st;
    }
    if (v->n != n)
        return sensim_ynode_error(v, SENSIM_EINVAL, "%s: expected %zu numbers%s, got %zu", what, n,
                                  n == 9 ? " (or 3 rows of 3)" : "", v->n);
    for (size_t i = 0; i < n && !st; i++) {
        snprintf(w, sizeof w, "%s[%zu]", what, i);
        st = quantity_of(v->items[i], w, dim, &tmp[i]);
    }
    return st;
}

sensim_status sensim_ynode_get_vector(const sensim_ynode *map, const char *key, sensim_dim dim, int required,
                                      size_t n, double *out)
{
    typed t;
    if (typed_value(map, key, required, NULL, &t) <= 0)
        return t.st;
    if (t.v->kind != SENSIM_YNODE_SEQUENCE)
        return sensim_ynode_error(t.v, SENSIM_EINVAL, "%s: expected a sequence of %zu numbers, got %s", t.what, n,
                                  kind_name(t.v));
    double *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp)
        return oom();
    sensim_status st = vector_of(t.v, t.what, dim, n, tmp);
    if (!st)
        memcpy(out, tmp, n * sizeof *out);
    free(tmp);
    return st;
}

/* ---- writing ---- */

#define YW_DEPTH 32

struct sensim_ywriter {
    yaml_emitter_t em;
    FILE *f;
    sensim_status st;
    int depth;               /* open collections, the root mapping included */
    char kind[YW_DEPTH];     /* 'm' or 's' */
};

static void yw_emit(sensim_ywriter *w, yaml_event_t *ev, int ok)
{
    if (w->st)
        return;
    if (!ok) {
        w->st = sensim_error(SENSIM_EINTERNAL, "YAML writer: cannot make an event");
        return;
    }
    if (!yaml_emitter_emit(&w->em, ev))
        w->st = w->em.error == YAML_WRITER_ERROR
                    ? sensim_error(SENSIM_EIO, "YAML writer: %s", w->em.problem ? w->em.problem : "write failed")
                    : sensim_error(SENSIM_EINTERNAL, "YAML writer: %s",
                                   w->em.problem ? w->em.problem : "emitter error");
}

/* A number or a boolean: plain. */
static void yw_plain(sensim_ywriter *w, const char *text)
{
    yaml_event_t ev;
    int ok = yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text), 1, 0,
                                          YAML_PLAIN_SCALAR_STYLE);
    yw_emit(w, &ev, ok);
}

sensim_ywriter *sensim_ywriter_create(FILE *f)
{
    sensim_ywriter *w = calloc(1, sizeof *w);
    if (!w || !yaml_emitter_initialize(&w->em)) {
        free(w);
        sensim_error(SENSIM_ENOMEM, "YAML writer: out of memory");
        return NULL;
    }
    w->f = f;
    yaml_emitter_set_output_file(&w->em, f);
    yaml_emitter_set_unicode(&w->em, 1);
    yaml_emitter_set_width(&w->em, 120);
    yaml_emitter_set_indent(&w->em, 2);
    yaml_event_t ev;
    int ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    yw_emit(w, &ev, ok);
    ok = yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    yw_emit(w, &ev, ok);
    sensim_ywriter_map_begin(w, 0);
    return w;
}

static void yw_end(sensim_ywriter *w)
{
    if (w->st)
        return;
    if (w->depth == 0) {
        w->st = sensim_error(SENSIM_EINVAL, "YAML writer: end without an open mapping or sequence");
        return;
    }
    yaml_event_t ev;
    int ok = w->kind[--w->depth] == 'm' ? yaml_mapping_end_event_initialize(&ev)
                                          : yaml_sequence_end_event_initialize(&ev);
    yw_emit(w, &ev, ok);
}

sensim_status sensim_ywriter_close(sensim_ywriter *w)
{
    if (!w)
        return SENSIM_OK;
    while (!w->st && w->depth > 0)
        yw_end(w);
    yaml_event_t ev;
    int ok = yaml_document_end_event_initialize(&ev, 1);
    yw_emit(w, &ev, ok);
    ok = yaml_stream_end_event_initialize(&ev);
    yw_emit(w, &ev, ok);
    if (!w->st && !yaml_emitter_flush(&w->em))
        w->st = sensim_error(SENSIM_EIO, "YAML writer: write failed");
    if (!w->st && (fflush(w->f) || ferror(w->f)))
        w->st = sensim_error(SENSIM_EIO, "YAML writer: write failed");
    sensim_status st = w->st;
    yaml_emitter_delete(&w->em);
    free(w);
    return st;
}

static void yw_begin(sensim_ywriter *w, char kind, int flow)
{
    if (w->st)
        return;
    if (w->depth == YW_DEPTH) {
        w->st = sensim_error(SENSIM_EINVAL, "YAML writer: nested deeper than %d", YW_DEPTH);
        return;
    }
    yaml_event_t ev;
    int ok = kind == 'm' ? yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                                               flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE)
                         : yaml_sequence_start_event_initialize(
                               &ev, NULL, NULL, 1, flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE);
    yw_emit(w, &ev, ok);
    if (!w->st)
        w->kind[w->depth++] = kind;
}

void sensim_ywriter_map_begin(sensim_ywriter *w, int flow) { yw_begin(w, 'm', flow); }
void sensim_ywriter_seq_begin(sensim_ywriter *w, int flow) { yw_begin(w, 's', flow); }
void sensim_ywriter_map_end(sensim_ywriter *w) { yw_end(w); }
void sensim_ywriter_seq_end(sensim_ywriter *w) { yw_end(w); }

void sensim_ywriter_key(sensim_ywriter *w, const char *key) { sensim_ywriter_string(w, key); }

/* Strings that a YAML 1.1 or 1.2 reader would take for a number, a
 * boolean or null when plain: written quoted, so that every reader (not
 * only sensim's, which reads scalars as text) sees a string. */
static int looks_typed(const char *s)
{
    static const char *const words[] = {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~",
                                        ".inf", "-.inf", "+.inf", ".nan", "=", "<<", NULL};
    if (!*s)
        return 1;
    for (size_t i = 0; words[i]; i++)
        if (!strcasecmp(s, words[i]))
            return 1;
    /* Anything that starts like a number: YAML 1.1 also reads 1_000,
     * 0b101, 1:30 (sexagesimal) and 2001-12-14 (a timestamp) as typed. */
    const char *d = s + (*s == '+' || *s == '-' || *s == '.');
    if (d[0] == '.' && d != s)
        d++;
    return isdigit((unsigned char)*d) != 0;
}

void sensim_ywriter_string(sensim_ywriter *w, const char *s)
{
    if (w->st)
        return;
    if (!s) {
        w->st = sensim_error(SENSIM_EINVAL, "YAML writer: NULL string");
        return;
    }
    /* The emitter picks plain where YAML allows it and quotes otherwise
     * (': ', ' #', a leading indicator, ...). */
    yaml_event_t ev;
    const int typed = looks_typed(s);
    int ok = yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), !typed, 1,
                                          typed ? YAML_SINGLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE);
    yw_emit(w, &ev, ok);
}

void sensim_ywriter_number(sensim_ywriter *w, double x)
{
    if (w->st)
        return;
    if (!isfinite(x)) {
        w->st = sensim_error(SENSIM_EINVAL, "YAML writer: %g is not a finite number", x);
        return;
    }
    /* The shortest of 15, 16 and 17 digits that reads back as x. */
    char buf[32];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    yw_plain(w, buf);
}

void sensim_ywriter_uint(sensim_ywriter *w, uint64_t x)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, x);
    yw_plain(w, buf);
}

void sensim_ywriter_int(sensim_ywriter *w, long long x)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", x);
    yw_plain(w, buf);
}

void sensim_ywriter_bool(sensim_ywriter *w, int x) { yw_plain(w, x ? "true" : "false"); }

void sensim_ywriter_numbers(sensim_ywriter *w, const double *x, size_t n)
{
    sensim_ywriter_seq_begin(w, 1);
    for (size_t i = 0; i < n; i++)
        sensim_ywriter_number(w, x[i]);
    sensim_ywriter_seq_end(w);
}
