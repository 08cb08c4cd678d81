/* SPDX-License-Identifier: ISC */
/*
 * Text that came from an agent, a module, a plan or a tool's arguments,
 * made fit for a person's terminal: every C0 control, DEL, every C1
 * control (U+0080-U+009F) and the bidi embeddings, overrides and
 * isolates (U+202A-U+202E, U+2066-U+2069), the bidi marks (U+200E,
 * U+200F, U+061C) and the line and paragraph separators (U+2028,
 * U+2029) in a visible form ("\x1b",
 * "\u202e"), and so is each byte that is not UTF-8.  Nothing such text
 * holds can move the cursor, recolour, retitle or reorder what is shown
 * around it (issue 28).
 */
#ifndef AS_ESCAPE_H
#define AS_ESCAPE_H

#include <stddef.h>

/*
 * Multi-line text that terraform rendered: a newline stays a line
 * break (a CR does not), and a backslash is terraform's own escape.
 */
#define ESC_LINES	0x01
/* JSON text (jansson's): the same characters as JSON's \u escapes. */
#define ESC_JSON	0x02

char	*esc_text(const char *, size_t, int);

#endif
