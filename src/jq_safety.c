/* wmap: upstream's jq safety rule, checked on the tokens of an expression.
 *
 * Definitions are read by every consumer of the cluster, so an expression must not be able
 * to rewrite the object (assignment and update operators, del) or walk it without bound
 * (.., recurse, paths, walk, repeat, range). Strings are skipped, except the code inside
 * their \( ) interpolations, and a name is a call only when it is not a field (.range) or a
 * variable ($paths) or an object key ({range: 1}). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "jq.h"

static const char *const forbidden[] = { "del", "range", "paths", "recurse", "walk", "repeat", NULL };

int wmap__jq_safety(const char *expr, char *msg, size_t len)
{
	/* Each level is either code (with its paren depth) or a string. */
	enum { CODE,
	       STR } mode[64];
	int parens[64];
	int top = 0;
	const char *p = expr;

	mode[0] = CODE;
	parens[0] = 0;
	while (*p) {
		if (mode[top] == STR) {
			if (*p == '\\' && p[1] == '(') {
				if (top + 1 >= 64)
					goto deep;
				top++;
				mode[top] = CODE;
				parens[top] = 1;
				p += 2;
			} else if (*p == '\\' && p[1]) {
				p += 2;
			} else if (*p == '"') {
				top--;
				p++;
			} else {
				p++;
			}
			continue;
		}
		char c = *p;
		if (c == '"') {
			if (top + 1 >= 64)
				goto deep;
			mode[++top] = STR;
			p++;
		} else if (c == '#') {
			while (*p && *p != '\n')
				p++;
		} else if (c == '(') {
			parens[top]++;
			p++;
		} else if (c == ')') {
			p++;
			if (top > 0 && --parens[top] == 0)
				top--; /* back into the string of this interpolation */
		} else if (c == '.' && p[1] == '.') {
			snprintf(msg, len, "uses the recursive descent operator '..', which is not allowed");
			return -1;
		} else if (c == '=') {
			char prev = p > expr ? p[-1] : '\0';
			if (p[1] == '=') {
				p += 2; /* == */
				continue;
			}
			if (prev == '!' || prev == '<' || prev == '>') {
				p++;
				continue;
			}
			if (prev == '|' || prev == '+' || prev == '-' || prev == '*' || prev == '/' || prev == '%')
				snprintf(msg, len, "uses the update operator '%s%c=', which is not allowed",
					 prev == '/' && p - expr >= 2 && p[-2] == '/' ? "/" : "", prev);
			else
				snprintf(msg, len, "uses the assignment operator '=', which is not allowed");
			return -1;
		} else if (isalpha((unsigned char)c) || c == '_') {
			const char *b = p;
			while (isalnum((unsigned char)*p) || *p == '_')
				p++;
			char before = b > expr ? b[-1] : '\0';
			const char *after = p;
			while (*after == ' ' || *after == '\t' || *after == '\n')
				after++;
			int is_key = *after == ':' && after[1] != ':';
			if (before == '.' || before == '$' || is_key)
				continue;
			size_t n = (size_t)(p - b);
			for (const char *const *f = forbidden; *f; f++)
				if (strlen(*f) == n && strncmp(b, *f, n) == 0) {
					snprintf(msg, len, "uses '%s', which is not allowed", *f);
					return -1;
				}
		} else {
			p++;
		}
	}
	return 0;
deep:
	snprintf(msg, len, "nests strings too deeply");
	return -1;
}
