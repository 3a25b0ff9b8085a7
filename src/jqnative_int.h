/* wmap internal: what jqnative.c and jqnative_builtins.c share. */
#ifndef WMAP_JQNATIVE_INT_H
#define WMAP_JQNATIVE_INT_H

#include "jqnative.h"

#define JN_STOP 1 /* a consumer has seen enough; not an error */

typedef enum {
	T_EOF,
	T_DOT,
	T_FIELD,
	T_LBRACK,
	T_RBRACK,
	T_LBRACE,
	T_RBRACE,
	T_LPAREN,
	T_RPAREN,
	T_PIPE,
	T_COMMA,
	T_COLON,
	T_SEMI,
	T_QUESTION,
	T_ALT,
	T_EQ,
	T_NE,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_PLUS,
	T_MINUS,
	T_STAR,
	T_SLASH,
	T_PERCENT,
	T_IDENT,
	T_VAR,
	T_NUM,
	T_STR,
} tok_kind;

typedef enum {
	N_IDENTITY,
	N_INDEX,
	N_ITER,
	N_LITERAL,
	N_PIPE,
	N_COMMA,
	N_ALT,
	N_AND,
	N_OR,
	N_BINOP,
	N_NEG,
	N_ARRAY,
	N_OBJECT,
	N_VAR,
	N_BIND,
	N_IF,
	N_TRY,
	N_CALL,
} node_kind;

typedef struct node node;
typedef struct jn_builtin jn_builtin; /* jqnative_builtins.c */
struct node {
	node_kind k;
	tok_kind op;          /* N_BINOP */
	node *a, *b, *c;      /* operands; N_INDEX: a target, b index; N_IF: a cond, b then, c else */
	char *name;           /* N_VAR, N_BIND, N_CALL */
	const jn_builtin *fn; /* N_CALL: the builtin, bound when parsed */
	json_t *lit;          /* N_LITERAL */
	size_t n;             /* N_CALL args, N_OBJECT entries */
	node **args;          /* N_CALL: args; N_OBJECT: key, value pairs (2n) */
	/* 1 when x has exactly one output on every input (or raises an error), marked when
	 * parsed: such a node is evaluated straight to its value (wmap__jn_single), with no
	 * continuation per operand. */
	unsigned char single;
	/* Marked with single: N_INDEX of a string literal key (its text and length), and
	 * whether the chain below is keys all the way down to `.` (a plain path); N_PIPE of
	 * `[a, b, ...] | min` (1) or `| max` (2) over single elements. */
	unsigned char plain;
	unsigned char best;
	/* Marked with single: x is in the subset evaluated with borrowed values and no error
	 * (wmap__jn_ev's fast path): `.`, literals, $vars, plain paths, //, comparisons, integer
	 * +, -, *, if, `as`, pipes and [..] | min/max of such. */
	unsigned char fast;
	/* wmap__jn_share_keys: a `.key` read on the element of the root's iteration that the
	 * expressions given together read more than once: its cell in a memo row, from 1 (0
	 * when none); memo_root marks that root (`P[]? | body`). */
	unsigned char slot;
	unsigned char memo_root;
	/* Marked with fast: N_INDEX of a key on `.` (`.key`); N_ALT of a plain path and a
	 * literal or $var (`.a.b // 0`), each read in place by the fast evaluation. */
	unsigned char dot_key;
	unsigned char alt_leaf;
	const char *key;
	size_t key_len;
};

struct wmap_jn {
	node *root;
	unsigned n_slots; /* the cells a memo row has for it (wmap__jn_share_keys), 0 when none */
};

typedef struct env {
	const char *name;
	json_t *v;
	const struct env *next;
} env;

typedef struct ectx {
	wmap_error *err;
	unsigned long steps;
	json_t *thrown;     /* the value error/0 or error/1 raised (owned), for catch; else NULL */
	int numbers;        /* results may take plain numbers (wmap__jn_eval_numbers) */
	wmap_jn_memo *memo; /* the caller's, or NULL */
	unsigned n_slots;   /* the expression's (wmap_jn.n_slots) */
	json_t **row;       /* the memo row of the element being evaluated, else NULL */
} ectx;

typedef int (*emit_fn)(ectx *c, void *ud, json_t *v, const char *ptr);

/* A node's evaluation paused on an operand: what to do with each of the operand's outputs
 * (logic, bindings, if, indexing and select share it; unused fields stay NULL). */
typedef struct cont {
	const node *x;
	json_t *in;
	const char *ptr;
	const env *e;
	emit_fn k;
	void *ud;
} cont;

int wmap__jn_ev(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud);
/* Marks every node of x's tree that is single (above); the parser calls it on each root. */
void wmap__jn_mark_single(node *x);
/* The builtin the native evaluator implements for name/arity, or NULL (libjq then evaluates
 * the expression). Borrowed from a static table. */
const jn_builtin *wmap__jn_builtin(const char *name, size_t arity);
/* Runs an N_CALL node's builtin (x->fn, bound by the parser): no name is compared. */
int wmap__jn_call(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud);
int wmap__jn_err(ectx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int wmap__jn_oom(ectx *c);
int wmap__jn_truthy(const json_t *v);
double wmap__jn_num(const json_t *v);
json_t *wmap__jn_mknum(double d);
int wmap__jn_compare(const json_t *a, const json_t *b);
const char *wmap__jn_type_name(const json_t *v);
void wmap__jn_describe(char *buf, size_t len, const json_t *v);
char *wmap__jn_dump(const json_t *v);
int wmap__jn_ev_all(ectx *c, const node *x, json_t *in, const env *e, json_t **out);
int wmap__jn_iterate(ectx *c, json_t *in, const char *ptr, int optional, emit_fn k, void *ud);
int wmap__jn_index_value(ectx *c, json_t *in, const char *ptr, json_t *idx, json_t **out, char **optr);
int wmap__jn_arith(ectx *c, tok_kind op, json_t *a, json_t *b, json_t **out);
/* jq's split of string a at string b (also a / b): a new array, NULL when out of memory. */
json_t *wmap__jn_split(const json_t *a, const json_t *b);

#endif
