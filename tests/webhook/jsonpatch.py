"""A small RFC 6902 JSON Patch applier, written from the RFC for the webhook tests.

It shares no code with wmap (src/patch.c): the tests apply the webhook's patches with it,
so a patch that the API server would refuse fails here too."""

import copy


class PatchError(Exception):
    pass


def _tokens(pointer):
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError("pointer %r does not start with /" % pointer)
    out = []
    for raw in pointer[1:].split("/"):
        i = 0
        tok = ""
        while i < len(raw):
            c = raw[i]
            if c == "~":
                if i + 1 >= len(raw) or raw[i + 1] not in "01":
                    raise PatchError("bad escape in %r" % pointer)
                tok += "~" if raw[i + 1] == "0" else "/"
                i += 2
            else:
                tok += c
                i += 1
        out.append(tok)
    return out


def _index(container, tok, allow_end):
    if allow_end and tok == "-":
        return len(container)
    if not tok.isdigit() or (len(tok) > 1 and tok[0] == "0"):
        raise PatchError("bad array index %r" % tok)
    i = int(tok)
    if i > len(container) or (not allow_end and i == len(container)):
        raise PatchError("index %d out of range" % i)
    return i


def _walk(doc, toks):
    cur = doc
    for tok in toks:
        if isinstance(cur, dict):
            if tok not in cur:
                raise PatchError("missing member %r" % tok)
            cur = cur[tok]
        elif isinstance(cur, list):
            cur = cur[_index(cur, tok, False)]
        else:
            raise PatchError("cannot descend into a scalar at %r" % tok)
    return cur


def get(doc, pointer):
    return _walk(doc, _tokens(pointer))


def _add(doc, toks, value):
    if not toks:
        return value
    parent = _walk(doc, toks[:-1])
    last = toks[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, True), value)
    else:
        raise PatchError("parent of %r is a scalar" % last)
    return doc


def _remove(doc, toks):
    if not toks:
        raise PatchError("cannot remove the root")
    parent = _walk(doc, toks[:-1])
    last = toks[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError("missing member %r" % last)
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, False))
    raise PatchError("parent of %r is a scalar" % last)


def apply(doc, ops):
    """Returns a patched deep copy of doc; raises PatchError naming the failing op."""
    if not isinstance(ops, list):
        raise PatchError("a JSON Patch is an array")
    doc = copy.deepcopy(doc)
    for n, op in enumerate(ops):
        try:
            kind = op["op"]
            toks = _tokens(op["path"])
            if kind == "add":
                doc = _add(doc, toks, copy.deepcopy(op["value"]))
            elif kind == "remove":
                _remove(doc, toks)
            elif kind == "replace":
                _walk(doc, toks)
                if toks:
                    _remove(doc, toks)
                doc = _add(doc, toks, copy.deepcopy(op["value"]))
            elif kind == "test":
                if _walk(doc, toks) != op["value"]:
                    raise PatchError("test failed")
            elif kind in ("move", "copy"):
                src = _tokens(op["from"])
                value = copy.deepcopy(_walk(doc, src))
                if kind == "move":
                    _remove(doc, src)
                doc = _add(doc, toks, value)
            else:
                raise PatchError("unknown op %r" % kind)
        except (KeyError, TypeError) as e:
            raise PatchError("op %d: malformed (%s)" % (n, e))
        except PatchError as e:
            raise PatchError("op %d (%s %s): %s" % (n, op.get("op"), op.get("path"), e))
    return doc
