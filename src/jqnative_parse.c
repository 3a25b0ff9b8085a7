/* wmap: the jq subset of definitions: lexer and parser (see jqnative.h).
 *
 * A recursive-descent parser over jq's grammar, precedence as in jq 1.6's parser.y
 * (| , // or and comparisons + - * / % postfix). It accepts only what the evaluator
 * implements and refuses everything else (so libjq runs it): comments, string
 * interpolation, reduce/foreach/def/label, slices, destructuring, assignment operators,
 * `if` without `else` (not jq 1.6), and any builtin missing from jqnative_builtins.c. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jqnative_int.h"

#define JN_MAX_DEPTH 64 /* expression nesting */
#define JN_MAX_TOKENS 4096

/* ---- lexer ---- */

typedef struct tok {
	tok_kind k;
	char *s; /* identifier, variable, field or string text */
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
		tok t = { 0 };
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
			static const struct {
				const char *s;
				tok_kind k;
			} ops[] = {
				{ "//=", T_EOF }, { "|=", T_EOF }, { "+=", T_EOF }, { "-=", T_EOF }, { "*=", T_EOF }, { "/=", T_EOF }, { "%=", T_EOF }, { "?//", T_EOF }, { "==", T_EQ }, { "!=", T_NE }, { "<=", T_LE }, { ">=", T_GE }, { "//", T_ALT }, { "[", T_LBRACK }, { "]", T_RBRACK }, { "{", T_LBRACE }, { "}", T_RBRACE }, { "(", T_LPAREN }, { ")", T_RPAREN }, { "|", T_PIPE }, { ",", T_COMMA }, { ":", T_COLON }, { ";", T_SEMI }, { "?", T_QUESTION }, { "<", T_LT }, { ">", T_GT }, { "+", T_PLUS }, { "-", T_MINUS }, { "*", T_STAR }, { "/", T_SLASH }, { "%", T_PERCENT }, { "=", T_EOF }
			};
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
	if (!target) /* out of memory making it: no index of nothing */
		return NULL;
	node *k = literal(json_string(key));
	if (!k)
		return fail(&(parser){ 0 }, target);
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

static const char *const unsupported_words[] = { "reduce", "foreach", "def", "label", "import",
						 "include", "then", "elif", "else", "end", "as",
						 "catch", "and", "or", "__loc__", NULL };

/* A builtin's call, its name read: the arguments, then the builtin bound to it (the parse
 * fails for one the native evaluator does not have: libjq knows more). */
static node *parse_call(parser *ps, const char *name)
{
	node *x = mk(N_CALL, NULL, NULL);
	if (!x || !(x->name = strdup(name)))
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
	if (!(x->fn = wmap__jn_builtin(x->name, x->n)))
		return fail(ps, x);
	return x;
}

/* A word: a literal (true, false, null), if, try, or a builtin's call. */
static node *parse_word(parser *ps, const char *w)
{
	node *x;
	if (strcmp(w, "true") == 0)
		return literal(json_true());
	if (strcmp(w, "false") == 0)
		return literal(json_false());
	if (strcmp(w, "null") == 0)
		return literal(json_null());
	if (strcmp(w, "if") == 0)
		return parse_if(ps);
	if (strcmp(w, "try") == 0) {
		x = mk(N_TRY, parse_postfix(ps), NULL);
		if (!x || !x->a)
			return fail(ps, x);
		if (is_ident(ps, "catch")) {
			ps->lx->pos++;
			if (!(x->b = parse_postfix(ps)))
				return fail(ps, x);
		}
		return x;
	}
	for (const char *const *u = unsupported_words; *u; u++)
		if (strcmp(w, *u) == 0)
			return fail(ps, NULL);
	return parse_call(ps, w);
}

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
		x = parse_word(ps, t->s);
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

/* A postfix term, or `Term as $x | body`: in jq's grammar the binding hangs on the term
 * before `as` and its body runs to the end of the enclosing expression, so `1 + 2 as $x | $x`
 * is 1 + (2 as $x | $x). Deciding here needs no backtracking. */
static node *parse_unary(parser *ps)
{
	node *x = parse_postfix(ps);
	if (!x || !is_ident(ps, "as"))
		return x;
	ps->lx->pos++;
	tok *v = peek(ps);
	if (v->k != T_VAR)
		return fail(ps, x); /* destructuring patterns are left to libjq */
	ps->lx->pos++;
	if (!accept(ps, T_PIPE))
		return fail(ps, x);
	node *body = parse_pipe(ps);
	node *b = body ? mk(N_BIND, x, body) : fail(ps, x);
	if (b && !(b->name = strdup(v->s)))
		return fail(ps, b);
	return b;
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
	node *x = parse_comma(ps);
	if (x && accept(ps, T_PIPE)) {
		node *r = parse_pipe(ps);
		x = r ? mk(N_PIPE, x, r) : fail(ps, x);
	}
	ps->depth--;
	return x;
}

wmap_jn *wmap__jn_parse(const char *text)
{
	lexer lx = { 0 };
	parser ps = { &lx, 0, 0 };
	wmap_jn *p = NULL;
	node *root;

	if (lex(&lx, text) != 0)
		goto cleanup;
	root = parse_pipe(&ps);
	if (!root || ps.fail || peek(&ps)->k != T_EOF) {
		node_free(root);
		goto cleanup;
	}
	wmap__jn_mark_single(root);
	p = calloc(1, sizeof(*p));
	if (p)
		p->root = root;
	else
		node_free(root);
cleanup:
	lex_free(&lx);
	return p;
}

void wmap__jn_free(wmap_jn *p)
{
	if (p) {
		node_free(p->root);
		free(p);
	}
}
