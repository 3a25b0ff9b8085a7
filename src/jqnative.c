/* wmap: the jq subset of definitions, parsed and evaluated natively (see jqnative.h).
 *
 * Evaluation follows jq's generator model with callbacks: every node calls `emit` once per
 * output. Short-circuiting constructs (first, any, all, limit) stop a generator by having
 * their callback return JN_STOP. `?`, `try` and `//` swallow errors raised by their own
 * body but never errors raised downstream of it (inside their emit), as jq does. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jqnative_int.h"

#define JN_MAX_DEPTH 64          /* expression nesting */
#define JN_MAX_STEPS 2000000UL   /* evaluation budget per run: no expression loops for ever */
#define JN_MAX_TOKENS 4096

/* ---- lexer ---- */

typedef struct tok {
	tok_kind k;
	char *s;      /* identifier, variable, field or string text */
	double num;
} tok;

typedef struct lexer {
	tok *t;
	size_t n, pos;
} lexer;

static void lex_free(lexer *lx)
{
	for (size_t i = 0; i < lx->n; i++)
		free(lx->t[i].s);
	free(lx->t);
}

/* A jq string literal. Interpolation \( ) and escapes beyond JSON's are refused. */
static char *lex_string(const char **pp)
{
	const char *p = *pp + 1;
	size_t cap = 64, n = 0;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	while (*p && *p != '"') {
		char c = *p++;
		if (c == '\\') {
			char e = *p++;
			switch (e) {
			case '"': c = '"'; break;
			case '\\': c = '\\'; break;
			case '/': c = '/'; break;
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			default: free(out); return NULL; /* \( and \u: left to libjq */
			}
		}
		if (n + 2 > cap) {
			char *no = realloc(out, cap *= 2);
			if (!no) {
				free(out);
				return NULL;
			}
			out = no;
		}
		out[n++] = c;
	}
	if (*p != '"') {
		free(out);
		return NULL;
	}
	out[n] = '\0';
	*pp = p + 1;
	return out;
}

static int lex(lexer *lx, const char *src)
{
	const char *p = src;
	size_t cap = 0;
	for (;;) {
		tok t = {0};
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '#')
			return -1; /* comments: rare, left to libjq */
		if (lx->n + 1 >= cap) {
			if (cap >= JN_MAX_TOKENS)
				return -1;
			cap = cap ? cap * 2 : 64;
			tok *nt = realloc(lx->t, cap * sizeof(*nt));
			if (!nt)
				return -1;
			lx->t = nt;
		}
		if (!*p) {
			lx->t[lx->n++] = t;
			return 0;
		}
		char c = *p;
		if (c == '.') {
			if (p[1] == '.')
				return -1;
			if (isalpha((unsigned char)p[1]) || p[1] == '_') {
				const char *b = ++p;
				while (isalnum((unsigned char)*p) || *p == '_')
					p++;
				t.k = T_FIELD;
				t.s = strndup(b, (size_t)(p - b));
			} else if (p[1] == '"') {
				p++;
				t.k = T_FIELD;
				if (!(t.s = lex_string(&p)))
					return -1;
			} else if (isdigit((unsigned char)p[1])) {
				goto number;
			} else {
				t.k = T_DOT;
				p++;
			}
		} else if (isdigit((unsigned char)c)) {
number:;
			char *end;
			t.k = T_NUM;
			t.num = strtod(p, &end);
			if (end == p)
				return -1;
			p = end;
		} else if (c == '"') {
			t.k = T_STR;
			if (!(t.s = lex_string(&p)))
				return -1;
		} else if (isalpha((unsigned char)c) || c == '_') {
			const char *b = p;
			while (isalnum((unsigned char)*p) || *p == '_')
				p++;
			if (*p == ':' && p[1] == ':')
				return -1; /* modules */
			t.k = T_IDENT;
			t.s = strndup(b, (size_t)(p - b));
		} else if (c == '$') {
			const char *b = ++p;
			while (isalnum((unsigned char)*p) || *p == '_')
				p++;
			if (p == b || strncmp(b, "__loc__", 7) == 0 || (p - b == 3 && strncmp(b, "ENV", 3) == 0))
				return -1;
			t.k = T_VAR;
			t.s = strndup(b, (size_t)(p - b));
		} else {
			static const struct { const char *s; tok_kind k; } ops[] = {
				{"//=", T_EOF}, {"|=", T_EOF}, {"+=", T_EOF}, {"-=", T_EOF}, {"*=", T_EOF},
				{"/=", T_EOF}, {"%=", T_EOF}, {"?//", T_EOF}, {"==", T_EQ}, {"!=", T_NE},
				{"<=", T_LE}, {">=", T_GE}, {"//", T_ALT}, {"[", T_LBRACK}, {"]", T_RBRACK},
				{"{", T_LBRACE}, {"}", T_RBRACE}, {"(", T_LPAREN}, {")", T_RPAREN},
				{"|", T_PIPE}, {",", T_COMMA}, {":", T_COLON}, {";", T_SEMI}, {"?", T_QUESTION},
				{"<", T_LT}, {">", T_GT}, {"+", T_PLUS}, {"-", T_MINUS}, {"*", T_STAR},
				{"/", T_SLASH}, {"%", T_PERCENT}, {"=", T_EOF}};
			size_t i;
			for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
				if (strncmp(p, ops[i].s, strlen(ops[i].s)) == 0)
					break;
			if (i == sizeof(ops) / sizeof(ops[0]) || ops[i].k == T_EOF)
				return -1; /* assignment, @format, ... */
			t.k = ops[i].k;
			p += strlen(ops[i].s);
		}
		if ((t.k == T_FIELD || t.k == T_IDENT || t.k == T_VAR) && !t.s)
			return -1;
		lx->t[lx->n++] = t;
	}
}

/* ---- syntax tree ---- */

struct wmap_jn {
	node *root;
};

static void node_free(node *x)
{
	if (!x)
		return;
	node_free(x->a);
	node_free(x->b);
	node_free(x->c);
	free(x->name);
	json_decref(x->lit);
	for (size_t i = 0; i < (x->k == N_OBJECT ? 2 * x->n : x->n); i++)
		node_free(x->args[i]);
	free(x->args);
	free(x);
}

static node *mk(node_kind k, node *a, node *b)
{
	node *x = calloc(1, sizeof(*x));
	if (!x) {
		node_free(a);
		node_free(b);
		return NULL;
	}
	x->k = k;
	x->a = a;
	x->b = b;
	return x;
}

typedef struct parser {
	lexer *lx;
	int depth;
	int fail;
} parser;

static tok *peek(parser *ps)
{
	return &ps->lx->t[ps->lx->pos];
}

static int accept(parser *ps, tok_kind k)
{
	if (peek(ps)->k != k)
		return 0;
	ps->lx->pos++;
	return 1;
}

static int is_ident(parser *ps, const char *word)
{
	return peek(ps)->k == T_IDENT && strcmp(peek(ps)->s, word) == 0;
}

static node *parse_pipe(parser *ps);
static node *parse_postfix(parser *ps);

static node *fail(parser *ps, node *x)
{
	ps->fail = 1;
	node_free(x);
	return NULL;
}

static node *literal(json_t *v)
{
	node *x = v ? mk(N_LITERAL, NULL, NULL) : NULL;
	if (x)
		x->lit = v;
	else
		json_decref(v);
	return x;
}

static node *field(node *target, const char *key)
{
	node *k = literal(json_string(key));
	if (!k)
		return fail(&(parser){0}, target);
	return mk(N_INDEX, target, k);
}

static node *parse_if(parser *ps)
{
	node *x = mk(N_IF, NULL, NULL);
	if (!x || !(x->a = parse_pipe(ps)) || !accept(ps, T_IDENT /* then */))
		return fail(ps, x);
	if (strcmp(ps->lx->t[ps->lx->pos - 1].s, "then") != 0 || !(x->b = parse_pipe(ps)))
		return fail(ps, x);
	if (is_ident(ps, "elif")) {
		ps->lx->pos++;
		x->c = parse_if(ps);
		return x->c ? x : fail(ps, x);
	}
	/* jq 1.6 requires else (the optional form came with 1.7) */
	if (!is_ident(ps, "else"))
		return fail(ps, x);
	ps->lx->pos++;
	if (!(x->c = parse_pipe(ps)))
		return fail(ps, x);
	if (!is_ident(ps, "end"))
		return fail(ps, x);
	ps->lx->pos++;
	return x;
}

static node *parse_object(parser *ps)
{
	node *x = mk(N_OBJECT, NULL, NULL);
	size_t cap = 0;
	if (!x)
		return NULL;
	if (accept(ps, T_RBRACE))
		return x;
	do {
		node *key = NULL, *val = NULL;
		tok *t = peek(ps);
		if (t->k == T_IDENT || t->k == T_STR) {
			ps->lx->pos++;
			key = literal(json_string(t->s));
			if (key && !accept(ps, T_COLON)) /* {a} and {"a"} mean {a: .a} */
				val = field(mk(N_IDENTITY, NULL, NULL), t->s);
		} else if (t->k == T_VAR) {
			ps->lx->pos++;
			key = literal(json_string(t->s));
			val = mk(N_VAR, NULL, NULL);
			if (val && !(val->name = strdup(t->s)))
				val = fail(ps, val);
		} else if (accept(ps, T_LPAREN)) {
			key = parse_pipe(ps);
			if (!key || !accept(ps, T_RPAREN) || !accept(ps, T_COLON)) {
				node_free(key);
				return fail(ps, x);
			}
		} else {
			return fail(ps, x);
		}
		if (!key)
			return fail(ps, x);
		if (!val) {
			/* ObjVal: a term, optionally piped into further terms */
			val = parse_postfix(ps);
			while (val && accept(ps, T_PIPE)) {
				node *r = parse_postfix(ps);
				val = r ? mk(N_PIPE, val, r) : fail(ps, val);
			}
			if (!val) {
				node_free(key);
				return fail(ps, x);
			}
		}
		if (x->n == cap) {
			cap = cap ? cap * 2 : 4;
			node **na = realloc(x->args, 2 * cap * sizeof(*na));
			if (!na) {
				node_free(key);
				node_free(val);
				return fail(ps, x);
			}
			x->args = na;
		}
		x->args[2 * x->n] = key;
		x->args[2 * x->n + 1] = val;
		x->n++;
	} while (accept(ps, T_COMMA));
	return accept(ps, T_RBRACE) ? x : fail(ps, x);
}

static const char *const unsupported_words[] = {"reduce", "foreach", "def", "label", "import",
						 "include", "then", "elif", "else", "end", "as",
						 "catch", "and", "or", "__loc__", NULL};

static node *parse_term(parser *ps)
{
	tok *t = peek(ps);
	node *x;

	if (++ps->depth > JN_MAX_DEPTH)
		return fail(ps, NULL);
	switch (t->k) {
	case T_DOT:
		ps->lx->pos++;
		x = mk(N_IDENTITY, NULL, NULL);
		if (x && peek(ps)->k == T_STR) { /* ."key" spelled with a space is not jq */
			return fail(ps, x);
		}
		break;
	case T_FIELD:
		ps->lx->pos++;
		x = field(mk(N_IDENTITY, NULL, NULL), t->s);
		break;
	case T_NUM:
		ps->lx->pos++;
		x = literal(t->num == floor(t->num) && fabs(t->num) < 9e15 ? json_integer((json_int_t)t->num)
									: json_real(t->num));
		break;
	case T_STR:
		ps->lx->pos++;
		x = literal(json_string(t->s));
		break;
	case T_LPAREN:
		ps->lx->pos++;
		x = parse_pipe(ps);
		if (!x || !accept(ps, T_RPAREN))
			return fail(ps, x);
		break;
	case T_LBRACK:
		ps->lx->pos++;
		if (accept(ps, T_RBRACK)) {
			x = literal(json_array());
			break;
		}
		x = mk(N_ARRAY, parse_pipe(ps), NULL);
		if (!x || !x->a || !accept(ps, T_RBRACK))
			return fail(ps, x);
		break;
	case T_LBRACE:
		ps->lx->pos++;
		x = parse_object(ps);
		break;
	case T_VAR:
		ps->lx->pos++;
		x = mk(N_VAR, NULL, NULL);
		if (x && !(x->name = strdup(t->s)))
			return fail(ps, x);
		break;
	case T_MINUS:
		ps->lx->pos++;
		x = mk(N_NEG, parse_postfix(ps), NULL);
		if (!x || !x->a)
			return fail(ps, x);
		break;
	case T_IDENT:
		ps->lx->pos++;
		if (strcmp(t->s, "true") == 0) {
			x = literal(json_true());
		} else if (strcmp(t->s, "false") == 0) {
			x = literal(json_false());
		} else if (strcmp(t->s, "null") == 0) {
			x = literal(json_null());
		} else if (strcmp(t->s, "if") == 0) {
			x = parse_if(ps);
		} else if (strcmp(t->s, "try") == 0) {
			x = mk(N_TRY, parse_postfix(ps), NULL);
			if (!x || !x->a)
				return fail(ps, x);
			if (is_ident(ps, "catch")) {
				ps->lx->pos++;
				if (!(x->b = parse_postfix(ps)))
					return fail(ps, x);
			}
		} else {
			for (const char *const *w = unsupported_words; *w; w++)
				if (strcmp(t->s, *w) == 0)
					return fail(ps, NULL);
			x = mk(N_CALL, NULL, NULL);
			if (!x || !(x->name = strdup(t->s)))
				return fail(ps, x);
			if (accept(ps, T_LPAREN)) {
				do {
					node *arg = parse_pipe(ps);
					node **na = arg ? realloc(x->args, (x->n + 1) * sizeof(*na)) : NULL;
					if (!na) {
						node_free(arg);
						return fail(ps, x);
					}
					x->args = na;
					x->args[x->n++] = arg;
				} while (accept(ps, T_SEMI));
				if (!accept(ps, T_RPAREN))
					return fail(ps, x);
			}
			if (!jn_known(x->name, x->n))
				return fail(ps, x); /* libjq knows more builtins */
		}
		break;
	default:
		return fail(ps, NULL);
	}
	ps->depth--;
	return x ? x : fail(ps, NULL);
}

static node *parse_postfix(parser *ps)
{
	node *x = parse_term(ps);
	while (x) {
		tok *t = peek(ps);
		if (t->k == T_FIELD) {
			ps->lx->pos++;
			x = field(x, t->s);
		} else if (t->k == T_LBRACK || (t->k == T_DOT && ps->lx->t[ps->lx->pos + 1].k == T_LBRACK)) {
			if (t->k == T_DOT)
				ps->lx->pos++;
			ps->lx->pos++;
			if (accept(ps, T_RBRACK)) {
				x = mk(N_ITER, x, NULL);
			} else {
				node *idx = parse_pipe(ps);
				if (!idx || !accept(ps, T_RBRACK)) { /* slices [a:b] are left to libjq */
					node_free(idx);
					return fail(ps, x);
				}
				x = mk(N_INDEX, x, idx);
			}
		} else if (t->k == T_QUESTION) {
			ps->lx->pos++;
			x = mk(N_TRY, x, NULL);
		} else {
			break;
		}
	}
	return x;
}

static node *parse_unary(parser *ps)
{
	return parse_postfix(ps);
}

static node *parse_binary(parser *ps, int level);

/* levels: 0 or, 1 and, 2 comparison, 3 + -, 4 * / % */
static node *parse_binary(parser *ps, int level)
{
	if (level > 4)
		return parse_unary(ps);
	node *x = parse_binary(ps, level + 1);
	while (x) {
		tok_kind k = peek(ps)->k;
		node_kind nk = N_BINOP;
		if (level == 0 && is_ident(ps, "or"))
			nk = N_OR;
		else if (level == 1 && is_ident(ps, "and"))
			nk = N_AND;
		else if (level == 2 && (k == T_EQ || k == T_NE || k == T_LT || k == T_LE || k == T_GT || k == T_GE))
			;
		else if (level == 3 && (k == T_PLUS || k == T_MINUS))
			;
		else if (level == 4 && (k == T_STAR || k == T_SLASH || k == T_PERCENT))
			;
		else
			break;
		ps->lx->pos++;
		node *r = parse_binary(ps, level + 1);
		if (!r)
			return fail(ps, x);
		x = mk(nk, x, r);
		if (x)
			x->op = k;
		if (level == 2)
			break; /* comparisons do not chain */
	}
	return x;
}

static node *parse_alt(parser *ps)
{
	node *x = parse_binary(ps, 0);
	if (x && accept(ps, T_ALT)) {
		node *r = parse_alt(ps);
		return r ? mk(N_ALT, x, r) : fail(ps, x);
	}
	return x;
}

static node *parse_comma(parser *ps)
{
	node *x = parse_alt(ps);
	while (x && accept(ps, T_COMMA)) {
		node *r = parse_alt(ps);
		x = r ? mk(N_COMMA, x, r) : fail(ps, x);
	}
	return x;
}

static node *parse_pipe(parser *ps)
{
	if (++ps->depth > JN_MAX_DEPTH)
		return fail(ps, NULL);
	/* `Term as $x | body`: try the binding form first */
	size_t save = ps->lx->pos;
	node *x = parse_postfix(ps);
	if (x && is_ident(ps, "as")) {
		ps->lx->pos++;
		tok *v = peek(ps);
		if (v->k != T_VAR || (ps->lx->pos++, !accept(ps, T_PIPE)))
			return fail(ps, x); /* destructuring patterns are left to libjq */
		node *body = parse_pipe(ps);
		node *b = body ? mk(N_BIND, x, body) : fail(ps, x);
		if (b && !(b->name = strdup(v->s)))
			return fail(ps, b);
		ps->depth--;
		return b;
	}
	node_free(x);
	ps->fail = 0;
	ps->lx->pos = save;
	x = parse_comma(ps);
	if (x && accept(ps, T_PIPE)) {
		node *r = parse_pipe(ps);
		x = r ? mk(N_PIPE, x, r) : fail(ps, x);
	}
	ps->depth--;
	return x;
}

wmap_jn *wmap_jn_parse(const char *text)
{
	lexer lx = {0};
	parser ps = {&lx, 0, 0};
	wmap_jn *p = NULL;
	node *root;

	if (lex(&lx, text) != 0)
		goto out;
	root = parse_pipe(&ps);
	if (!root || ps.fail || peek(&ps)->k != T_EOF) {
		node_free(root);
		goto out;
	}
	p = calloc(1, sizeof(*p));
	if (p)
		p->root = root;
	else
		node_free(root);
out:
	lex_free(&lx);
	return p;
}

void wmap_jn_free(wmap_jn *p)
{
	if (p) {
		node_free(p->root);
		free(p);
	}
}

/* ---- evaluation ---- */

int jn_err(ectx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (c->err) {
		vsnprintf(c->err->message, sizeof(c->err->message), fmt, ap);
		c->err->code = WMAP_EEVAL;
	}
	va_end(ap);
	return WMAP_EEVAL;
}

int jn_oom(ectx *c)
{
	if (c->err)
		wmap_error_set(c->err, WMAP_ENOMEM, "out of memory");
	return WMAP_ENOMEM;
}

const char *jn_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER:
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	default: return "null";
	}
}

int jn_truthy(const json_t *v)
{
	return v && !json_is_null(v) && !json_is_false(v);
}

double jn_num(const json_t *v)
{
	return json_is_integer(v) ? (double)json_integer_value(v) : json_real_value(v);
}

json_t *jn_mknum(double d)
{
	if (d == floor(d) && fabs(d) < 9e15)
		return json_integer((json_int_t)d);
	return json_real(d);
}

/* jq's order: null < false < true < numbers < strings < arrays < objects. */
static int kind_rank(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_NULL: return 0;
	case JSON_FALSE: return 1;
	case JSON_TRUE: return 2;
	case JSON_INTEGER:
	case JSON_REAL: return 3;
	case JSON_STRING: return 4;
	case JSON_ARRAY: return 5;
	default: return 6;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char **sorted_keys(const json_t *o, size_t *n)
{
	const char **keys = malloc((json_object_size(o) + 1) * sizeof(*keys));
	const char *k;
	json_t *v;
	*n = 0;
	if (!keys)
		return NULL;
	json_object_foreach((json_t *)o, k, v)
		keys[(*n)++] = k;
	qsort(keys, *n, sizeof(*keys), cmp_str);
	return keys;
}

int jn_compare(const json_t *a, const json_t *b)
{
	int ra = kind_rank(a), rb = kind_rank(b);
	if (ra != rb)
		return ra < rb ? -1 : 1;
	switch (ra) {
	case 3: {
		double x = jn_num(a), y = jn_num(b);
		return x < y ? -1 : x > y;
	}
	case 4: {
		size_t la = json_string_length(a), lb = json_string_length(b);
		int r = memcmp(json_string_value(a), json_string_value(b), la < lb ? la : lb);
		return r ? (r < 0 ? -1 : 1) : (la < lb ? -1 : la > lb);
	}
	case 5: {
		size_t la = json_array_size(a), lb = json_array_size(b);
		for (size_t i = 0; i < la && i < lb; i++) {
			int r = jn_compare(json_array_get(a, i), json_array_get(b, i));
			if (r)
				return r;
		}
		return la < lb ? -1 : la > lb;
	}
	case 6: {
		size_t na, nb;
		const char **ka = sorted_keys(a, &na), **kb = sorted_keys(b, &nb);
		int r = 0;
		if (!ka || !kb) {
			free(ka);
			free(kb);
			return 0;
		}
		for (size_t i = 0; !r && i < na && i < nb; i++)
			r = strcmp(ka[i], kb[i]);
		if (!r && na != nb)
			r = na < nb ? -1 : 1;
		for (size_t i = 0; !r && i < na; i++)
			r = jn_compare(json_object_get(a, ka[i]), json_object_get(b, ka[i]));
		free(ka);
		free(kb);
		return r < 0 ? -1 : r > 0;
	}
	default:
		return 0;
	}
}

char *jn_dump(const json_t *v)
{
	return json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
}

/* "number (1)": the operand in a message, shortened like jq's. */
void jn_describe(char *buf, size_t len, const json_t *v)
{
	char *s = jn_dump(v);
	snprintf(buf, len, "%s (%.11s%s)", jn_type_name(v), s ? s : "", s && strlen(s) > 11 ? "..." : "");
	free(s);
}

/* jq's object multiplication: a recursive merge, b winning. */
static json_t *deep_merge(const json_t *a, const json_t *b)
{
	json_t *out = json_copy((json_t *)a);
	const char *k;
	json_t *v;
	if (!out)
		return NULL;
	json_object_foreach((json_t *)b, k, v) {
		json_t *av = json_object_get(out, k);
		json_t *nv = json_is_object(av) && json_is_object(v) ? deep_merge(av, v) : json_incref(v);
		if (!nv || json_object_set_new(out, k, nv)) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/* jq's string division: split a by the separator b. */
static json_t *split_string(const json_t *a, const json_t *b)
{
	const char *s = json_string_value(a), *sep = json_string_value(b);
	size_t ls = json_string_length(a), lsep = json_string_length(b), start = 0;
	json_t *out = json_array();
	if (!out || ls == 0)
		return out;
	for (size_t i = 0; lsep > 0 && i + lsep <= ls;)
		if (memcmp(s + i, sep, lsep) == 0) {
			json_array_append_new(out, json_stringn(s + start, i - start));
			i += lsep;
			start = i;
		} else {
			i++;
		}
	json_array_append_new(out, json_stringn(s + start, ls - start));
	return out;
}

int jn_arith(ectx *c, tok_kind op, json_t *a, json_t *b, json_t **out)
{
	char da[64], db[64];
	*out = NULL;
	if (op == T_PLUS) {
		if (json_is_null(a)) {
			*out = json_incref(b);
		} else if (json_is_null(b)) {
			*out = json_incref(a);
		} else if (json_is_number(a) && json_is_number(b)) {
			*out = jn_mknum(jn_num(a) + jn_num(b));
		} else if (json_is_string(a) && json_is_string(b)) {
			size_t la = json_string_length(a), lb = json_string_length(b);
			char *s = malloc(la + lb + 1);
			if (!s)
				return jn_oom(c);
			memcpy(s, json_string_value(a), la);
			memcpy(s + la, json_string_value(b), lb);
			s[la + lb] = '\0';
			*out = json_stringn_nocheck(s, la + lb);
			free(s);
		} else if (json_is_array(a) && json_is_array(b)) {
			*out = json_copy(a);
			if (*out && json_array_extend(*out, b))
				return jn_oom(c);
		} else if (json_is_object(a) && json_is_object(b)) {
			*out = json_copy(a);
			if (*out && json_object_update(*out, b))
				return jn_oom(c);
		} else {
			goto mismatch;
		}
	} else if (op == T_STAR && ((json_is_string(a) && json_is_number(b)) || (json_is_number(a) && json_is_string(b)))) {
		/* jq repeats a string n times (n truncated; none -> null) */
		const json_t *str = json_is_string(a) ? a : b;
		double times = jn_num(json_is_string(a) ? b : a);
		size_t len = json_string_length(str);
		long long n = times >= 1 ? (long long)times : 0;
		if (n <= 0)
			return (*out = json_null()), 0;
		if (len && (unsigned long long)n > (16u << 20) / len)
			return jn_err(c, "string repetition too long");
		char *buf = malloc(len * (size_t)n + 1);
		if (!buf)
			return jn_oom(c);
		for (long long i = 0; i < n; i++)
			memcpy(buf + (size_t)i * len, json_string_value(str), len);
		*out = json_stringn_nocheck(buf, len * (size_t)n);
		free(buf);
	} else if (op == T_STAR && json_is_object(a) && json_is_object(b)) {
		*out = deep_merge(a, b);
	} else if (op == T_SLASH && json_is_string(a) && json_is_string(b)) {
		*out = split_string(a, b);
	} else if (json_is_number(a) && json_is_number(b)) {
		double x = jn_num(a), y = jn_num(b);
		if (op == T_MINUS)
			*out = jn_mknum(x - y);
		else if (op == T_STAR)
			*out = jn_mknum(x * y);
		else if (op == T_SLASH) {
			if (y == 0)
				goto divzero;
			*out = jn_mknum(x / y);
		} else {
			long long xi = (long long)x, yi = (long long)y;
			if (yi == 0)
				goto divzero;
			*out = jn_mknum((double)(xi % (yi < 0 ? -yi : yi)));
		}
	} else if (op == T_MINUS && json_is_array(a) && json_is_array(b)) {
		*out = json_array();
		size_t i, j;
		json_t *x, *y;
		json_array_foreach(a, i, x) {
			int keep = 1;
			json_array_foreach(b, j, y)
				if (jn_compare(x, y) == 0)
					keep = 0;
			if (keep && *out)
				json_array_append(*out, x);
		}
	} else {
		goto mismatch;
	}
	return *out ? 0 : jn_oom(c);
mismatch:
	jn_describe(da, sizeof(da), a);
	jn_describe(db, sizeof(db), b);
	return jn_err(c, "%s and %s cannot be %s", da, db,
		   op == T_PLUS ? "added" : op == T_MINUS ? "subtracted" : op == T_STAR ? "multiplied"
		   : op == T_SLASH ? "divided" : "divided");
divzero:
	jn_describe(da, sizeof(da), a);
	jn_describe(db, sizeof(db), b);
	return jn_err(c, "%s and %s cannot be divided because the divisor is zero", da, db);
}

/* ---- helpers that collect or consume generator outputs ---- */

typedef struct collect {
	json_t *arr;
} collect;

static int collect_emit(ectx *c, void *ud, json_t *v, const char *ptr)
{
	(void)ptr;
	return json_array_append(((collect *)ud)->arr, v) ? jn_oom(c) : 0;
}

/* Every output of x on in, as a new array. */
int jn_ev_all(ectx *c, const node *x, json_t *in, const env *e, json_t **out)
{
	collect col = {json_array()};
	if (!col.arr)
		return jn_oom(c);
	int rc = jn_ev(c, x, in, NULL, e, collect_emit, &col);
	if (rc) {
		json_decref(col.arr);
		return rc;
	}
	*out = col.arr;
	return 0;
}

/* Runs k for each element of a container (jq's .[]). */
int jn_iterate(ectx *c, json_t *in, const char *ptr, int optional, emit_fn k, void *ud)
{
	int rc = 0;
	char *p = NULL;
	if (json_is_array(in)) {
		size_t i;
		json_t *x;
		json_array_foreach(in, i, x) {
			if (ptr && !(p = wmap_pointer_append_index(ptr, i)))
				return jn_oom(c);
			rc = k(c, ud, x, p);
			free(p);
			p = NULL;
			if (rc)
				return rc;
		}
		return 0;
	}
	if (json_is_object(in)) {
		const char *key;
		json_t *x;
		json_object_foreach(in, key, x) {
			if (ptr && !(p = wmap_pointer_append(ptr, key)))
				return jn_oom(c);
			rc = k(c, ud, x, p);
			free(p);
			p = NULL;
			if (rc)
				return rc;
		}
		return 0;
	}
	if (optional)
		return 0;
	return jn_err(c, "Cannot iterate over %s%s", jn_type_name(in),
		   json_is_null(in) ? "" : json_is_string(in) ? " (string)" : "");
}

/* The result of indexing in with idx (jq's .[idx]); ptr of the result into *optr. */
int jn_index_value(ectx *c, json_t *in, const char *ptr, json_t *idx, json_t **out, char **optr)
{
	*optr = NULL;
	*out = NULL;
	if (json_is_null(in) && (json_is_string(idx) || json_is_number(idx) || json_is_null(idx))) {
		*out = json_null();
	} else if (json_is_object(in) && json_is_string(idx)) {
		*out = json_object_get(in, json_string_value(idx));
		if (ptr && !(*optr = wmap_pointer_append(ptr, json_string_value(idx))))
			return jn_oom(c);
		*out = *out ? json_incref(*out) : json_null();
		return 0;
	} else if (json_is_array(in) && json_is_number(idx)) {
		double d = jn_num(idx);
		long long i = (long long)floor(d);
		size_t n = json_array_size(in);
		if (i < 0)
			i += (long long)n;
		json_t *v = (i >= 0 && (size_t)i < n && d == floor(d)) ? json_array_get(in, (size_t)i) : NULL;
		if (ptr && i >= 0 && d == floor(d) && !(*optr = wmap_pointer_append_index(ptr, (size_t)i)))
			return jn_oom(c);
		*out = v ? json_incref(v) : json_null();
		return 0;
	} else if (json_is_array(in) && json_is_array(idx)) {
		/* indices of a sub-array, as jq's .[array] */
		json_t *res = json_array();
		size_t n = json_array_size(in), m = json_array_size(idx);
		for (size_t i = 0; res && m > 0 && i + m <= n; i++) {
			size_t j = 0;
			while (j < m && jn_compare(json_array_get(in, i + j), json_array_get(idx, j)) == 0)
				j++;
			if (j == m)
				json_array_append_new(res, json_integer((json_int_t)i));
		}
		*out = res;
	} else {
		char a[64];
		if (json_is_string(idx))
			return jn_err(c, "Cannot index %s with \"%s\"", jn_type_name(in), json_string_value(idx));
		jn_describe(a, sizeof(a), idx);
		return jn_err(c, "Cannot index %s with %s", jn_type_name(in), jn_type_name(idx));
	}
	return *out ? 0 : jn_oom(c);
}

/* ---- node evaluation ---- */

typedef struct pipe_ud {
	const node *next;
	const env *e;
	emit_fn k;
	void *ud;
} pipe_ud;

static int pipe_emit(ectx *c, void *ud, json_t *v, const char *ptr)
{
	pipe_ud *p = ud;
	return jn_ev(c, p->next, v, ptr, p->e, p->k, p->ud);
}

/* Forwards outputs and remembers whether the downstream failed (guards for try and //). */
typedef struct guard {
	emit_fn k;
	void *ud;
	int downstream_rc;
	int emitted;
	int only_truthy;
} guard;

static int guard_emit(ectx *c, void *ud, json_t *v, const char *ptr)
{
	guard *g = ud;
	if (g->only_truthy && !jn_truthy(v))
		return 0;
	g->emitted = 1;
	int rc = g->k(c, g->ud, v, ptr);
	if (rc)
		g->downstream_rc = rc;
	return rc;
}

typedef struct index_ud {
	json_t *in;
	const char *ptr;
	int optional;
	emit_fn k;
	void *ud;
} index_ud;

static int index_emit(ectx *c, void *ud, json_t *idx, const char *ptr_unused)
{
	index_ud *x = ud;
	json_t *v;
	char *p;
	(void)ptr_unused;
	int rc = jn_index_value(c, x->in, x->ptr, idx, &v, &p);
	if (rc)
		return rc;
	rc = x->k(c, x->ud, v, p);
	json_decref(v);
	free(p);
	return rc;
}

typedef struct target_ud {
	const node *x;
	const env *e;
	emit_fn k;
	void *ud;
	json_t *root;       /* the input of the whole postfix expression (index expressions read it) */
	const char *rootptr;
} target_ud;

static int target_emit(ectx *c, void *ud, json_t *v, const char *ptr)
{
	target_ud *t = ud;
	if (t->x->k == N_ITER)
		return jn_iterate(c, v, ptr, 0, t->k, t->ud);
	index_ud iu = {v, ptr, 0, t->k, t->ud};
	/* the index expression reads the original input, not the target */
	return jn_ev(c, t->x->b, t->root, NULL, t->e, index_emit, &iu);
}

typedef struct binop_ud {
	const node *x;
	json_t *in;
	const env *e;
	json_t *rhs;
	emit_fn k;
	void *ud;
} binop_ud;

static int binop_lhs(ectx *c, void *ud, json_t *lhs, const char *ptr)
{
	binop_ud *b = ud;
	json_t *res = NULL;
	int rc;
	(void)ptr;
	switch (b->x->op) {
	case T_EQ: res = json_boolean(jn_compare(lhs, b->rhs) == 0); break;
	case T_NE: res = json_boolean(jn_compare(lhs, b->rhs) != 0); break;
	case T_LT: res = json_boolean(jn_compare(lhs, b->rhs) < 0); break;
	case T_LE: res = json_boolean(jn_compare(lhs, b->rhs) <= 0); break;
	case T_GT: res = json_boolean(jn_compare(lhs, b->rhs) > 0); break;
	case T_GE: res = json_boolean(jn_compare(lhs, b->rhs) >= 0); break;
	default:
		if ((rc = jn_arith(c, b->x->op, lhs, b->rhs, &res)))
			return rc;
	}
	rc = b->k(c, b->ud, res, NULL);
	json_decref(res);
	return rc;
}

static int binop_rhs(ectx *c, void *ud, json_t *rhs, const char *ptr)
{
	binop_ud *b = ud;
	(void)ptr;
	b->rhs = rhs;
	/* jq runs the right operand in the outer loop */
	return jn_ev(c, b->x->a, b->in, NULL, b->e, binop_lhs, b);
}

typedef struct logic_ud {
	const node *x;
	json_t *in;
	const env *e;
	emit_fn k;
	void *ud;
} logic_ud;

static int logic_rhs(ectx *c, void *ud, json_t *v, const char *ptr)
{
	logic_ud *l = ud;
	(void)ptr;
	return l->k(c, l->ud, json_boolean(jn_truthy(v)), NULL);
}

static int logic_lhs(ectx *c, void *ud, json_t *v, const char *ptr)
{
	logic_ud *l = ud;
	(void)ptr;
	int t = jn_truthy(v);
	if (l->x->k == N_AND && !t)
		return l->k(c, l->ud, json_false(), NULL);
	if (l->x->k == N_OR && t)
		return l->k(c, l->ud, json_true(), NULL);
	return jn_ev(c, l->x->b, l->in, NULL, l->e, logic_rhs, l);
}

typedef struct bind_ud {
	const node *x;
	json_t *in;
	const char *ptr;
	const env *e;
	emit_fn k;
	void *ud;
} bind_ud;

static int bind_emit(ectx *c, void *ud, json_t *v, const char *ptr_unused)
{
	bind_ud *b = ud;
	env ne = {b->x->name, v, b->e};
	(void)ptr_unused;
	return jn_ev(c, b->x->b, b->in, b->ptr, &ne, b->k, b->ud);
}

typedef struct if_ud {
	const node *x;
	json_t *in;
	const char *ptr;
	const env *e;
	emit_fn k;
	void *ud;
} if_ud;

static int if_emit(ectx *c, void *ud, json_t *cond, const char *ptr_unused)
{
	if_ud *f = ud;
	(void)ptr_unused;
	if (jn_truthy(cond))
		return jn_ev(c, f->x->b, f->in, f->ptr, f->e, f->k, f->ud);
	return jn_ev(c, f->x->c, f->in, f->ptr, f->e, f->k, f->ud);
}

/* Object construction: the cartesian product of every entry's keys and values. */
typedef struct obj_ud {
	const node *x;
	json_t *in;
	const env *e;
	size_t at;
	json_t *obj;
	json_t *key;
	emit_fn k;
	void *ud;
} obj_ud;

static int obj_step(ectx *c, obj_ud *o);

static int obj_value(ectx *c, void *ud, json_t *v, const char *ptr)
{
	obj_ud *o = ud;
	(void)ptr;
	json_t *saved = json_copy(o->obj);
	if (!saved || json_object_set(o->obj, json_string_value(o->key), v)) {
		json_decref(saved);
		return jn_oom(c);
	}
	o->at++;
	json_t *key = o->key;
	int rc = obj_step(c, o);
	o->key = key;
	o->at--;
	json_decref(o->obj);
	o->obj = saved;
	return rc;
}

static int obj_key(ectx *c, void *ud, json_t *k, const char *ptr)
{
	obj_ud *o = ud;
	(void)ptr;
	if (!json_is_string(k))
		return jn_err(c, "Object keys must be strings");
	o->key = k;
	return jn_ev(c, o->x->args[2 * o->at + 1], o->in, NULL, o->e, obj_value, o);
}

static int obj_step(ectx *c, obj_ud *o)
{
	if (o->at == o->x->n)
		return o->k(c, o->ud, o->obj, NULL);
	return jn_ev(c, o->x->args[2 * o->at], o->in, NULL, o->e, obj_key, o);
}


int jn_ev(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	if (++c->steps > JN_MAX_STEPS)
		return jn_err(c, "the expression took more than %lu steps", JN_MAX_STEPS);
	switch (x->k) {
	case N_IDENTITY:
		return k(c, ud, in, ptr);
	case N_LITERAL:
		return k(c, ud, x->lit, NULL);
	case N_INDEX:
	case N_ITER: {
		target_ud t = {x, e, k, ud, in, ptr};
		return jn_ev(c, x->a, in, ptr, e, target_emit, &t);
	}
	case N_PIPE: {
		pipe_ud p = {x->b, e, k, ud};
		return jn_ev(c, x->a, in, ptr, e, pipe_emit, &p);
	}
	case N_COMMA: {
		int rc = jn_ev(c, x->a, in, ptr, e, k, ud);
		return rc ? rc : jn_ev(c, x->b, in, ptr, e, k, ud);
	}
	case N_ALT: {
		/* `a // b`: a's truthy outputs; b when there are none. libjq 1.6 lets an error
		 * in a through (later jq versions swallow it): so do we. */
		guard g = {k, ud, 0, 0, 1};
		int rc = jn_ev(c, x->a, in, ptr, e, guard_emit, &g);
		if (rc || g.emitted)
			return rc;
		return jn_ev(c, x->b, in, ptr, e, k, ud);
	}
	case N_AND:
	case N_OR: {
		logic_ud l = {x, in, e, k, ud};
		return jn_ev(c, x->a, in, NULL, e, logic_lhs, &l);
	}
	case N_BINOP: {
		binop_ud b = {x, in, e, NULL, k, ud};
		return jn_ev(c, x->b, in, NULL, e, binop_rhs, &b);
	}
	case N_NEG: {
		json_t *all;
		int rc = jn_ev_all(c, x->a, in, e, &all);
		size_t i;
		json_t *v;
		json_array_foreach(all, i, v) {
			if (!rc && !json_is_number(v))
				rc = jn_err(c, "%s cannot be negated", jn_type_name(v));
			json_t *n = rc ? NULL : jn_mknum(-jn_num(v));
			if (!rc)
				rc = n ? k(c, ud, n, NULL) : jn_oom(c);
			json_decref(n);
		}
		json_decref(rc && !all ? NULL : all);
		return rc;
	}
	case N_ARRAY: {
		json_t *all;
		int rc = jn_ev_all(c, x->a, in, e, &all);
		if (rc)
			return rc;
		rc = k(c, ud, all, NULL);
		json_decref(all);
		return rc;
	}
	case N_OBJECT: {
		obj_ud o = {x, in, e, 0, json_object(), NULL, k, ud};
		if (!o.obj)
			return jn_oom(c);
		int rc = obj_step(c, &o);
		json_decref(o.obj);
		return rc;
	}
	case N_VAR:
		for (const env *v = e; v; v = v->next)
			if (strcmp(v->name, x->name) == 0)
				return k(c, ud, v->v, NULL);
		return jn_err(c, "$%s is not defined", x->name);
	case N_BIND: {
		bind_ud b = {x, in, ptr, e, k, ud};
		return jn_ev(c, x->a, in, NULL, e, bind_emit, &b);
	}
	case N_IF: {
		if_ud f = {x, in, ptr, e, k, ud};
		return jn_ev(c, x->a, in, NULL, e, if_emit, &f);
	}
	case N_TRY: {
		guard g = {k, ud, 0, 0, 0};
		int rc = jn_ev(c, x->a, in, ptr, e, guard_emit, &g);
		if (!rc || g.downstream_rc || rc == JN_STOP || rc == WMAP_ENOMEM)
			return rc;
		if (!x->b)
			return 0;
		json_t *msg = json_string(c->err ? c->err->message : "error");
		if (!msg)
			return jn_oom(c);
		rc = jn_ev(c, x->b, msg, NULL, e, k, ud);
		json_decref(msg);
		return rc;
	}
	case N_CALL:
		return jn_call(c, x, in, ptr, e, k, ud);
	}
	return jn_err(c, "unknown node");
}

typedef struct results_ud {
	wmap_results *out;
} results_ud;

static int results_emit(ectx *c, void *ud, json_t *v, const char *ptr)
{
	results_ud *r = ud;
	if (r->out->n >= WMAP_MAX_RESULTS)
		return jn_err(c, "more than %d results", WMAP_MAX_RESULTS);
	char *p = ptr ? strdup(ptr) : NULL;
	if ((ptr && !p) || wmap_results_push(r->out, json_incref(v), p))
		return jn_oom(c);
	return 0;
}

int wmap_jn_eval(const wmap_jn *p, json_t *input, wmap_results *out, wmap_error *error)
{
	ectx c = {error, 0};
	results_ud r = {out};
	int rc = jn_ev(&c, p->root, input, "", NULL, results_emit, &r);
	if (rc == JN_STOP)
		rc = 0;
	return rc;
}
