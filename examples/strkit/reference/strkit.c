/*
 * strkit, the reference implementation of the example ProgramBench-format
 * task (examples/strkit). build.sh compiles it into the task's reference
 * executable; the agents get only that binary and the manual in docs/.
 * Input is treated as ASCII bytes.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VERSION "1.4.0"

static const char *USAGE =
  "usage: strkit COMMAND [OPTIONS] [TEXT...]\n"
  "\n"
  "Text commands work on TEXT (the arguments joined by spaces) or, with no\n"
  "arguments, on each line of standard input:\n"
  "  upper        upper-case the text\n"
  "  lower        lower-case the text\n"
  "  title        upper-case the first letter of each word, lower-case the rest\n"
  "  reverse      reverse the text\n"
  "  rot13        rotate letters by 13 places\n"
  "  caesar       shift letters: -s, --shift N (required)\n"
  "  slug         turn the text into a URL slug\n"
  "  palindrome   say yes or no (exit status 1 for no)\n"
  "  pad          pad to a width: -w, --width N (required),\n"
  "               -a, --align left|right|center, -c, --char C\n"
  "\n"
  "Commands that read standard input:\n"
  "  count        print the number of lines, words and bytes\n"
  "  wrap         wrap words to a width: -w, --width N (default 40)\n"
  "  freq         word frequencies: -n, --top N\n"
  "  base64       encode; -d, --decode to decode\n"
  "\n"
  "Other:\n"
  "  roman        N as a Roman numeral; -d, --decode NUMERAL for the number\n"
  "  --help       print this help\n"
  "  --version    print the version\n";

/* ---------- small helpers ---------- */

typedef struct { char *data; size_t len, cap; } Buf;

static void buf_push(Buf *b, char c) {
  if (b->len + 1 >= b->cap) {
    b->cap = b->cap ? b->cap * 2 : 256;
    b->data = realloc(b->data, b->cap);
    if (!b->data) { perror("strkit"); exit(70); }
  }
  b->data[b->len++] = c;
  b->data[b->len] = '\0';
}

static void buf_puts(Buf *b, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) buf_push(b, s[i]);
}

static char *read_stdin(size_t *len) {
  Buf b = {0};
  int c;
  buf_push(&b, 'x'); b.len = 0; b.data[0] = '\0';
  while ((c = getchar()) != EOF) buf_push(&b, (char)c);
  *len = b.len;
  return b.data;
}

static const char *cmd_name = "";

static void usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "strkit: %s: ", cmd_name);
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  exit(2);
}

static long parse_number(const char *s) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || errno == ERANGE || v > INT_MAX || v < INT_MIN) usage_error("not a number: '%s'", s);
  return v;
}

/* Options: short -x VALUE, long --name VALUE or --name=VALUE; "--" ends them. */
typedef struct { const char *shortname, *longname; int takes_value; const char *value; int seen; } Opt;

static int parse_options(int argc, char **argv, Opt *opts, int nopts) {
  int i = 0;
  while (i < argc) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) return i + 1;
    if (a[0] != '-' || a[1] == '\0') return i;
    int matched = 0;
    for (int k = 0; k < nopts; k++) {
      Opt *o = &opts[k];
      size_t ln = strlen(o->longname);
      const char *inline_value = NULL;
      int is_long = strncmp(a, o->longname, ln) == 0 && (a[ln] == '\0' || a[ln] == '=');
      if (is_long && a[ln] == '=') inline_value = a + ln + 1;
      if (!is_long && strcmp(a, o->shortname) != 0) continue;
      if (inline_value && !o->takes_value) usage_error("unknown option '%s'", a);
      matched = 1;
      o->seen = 1;
      if (o->takes_value) {
        if (inline_value) o->value = inline_value;
        else if (i + 1 < argc) o->value = argv[++i];
        else usage_error("option %s needs a value", o->longname);
      }
      break;
    }
    if (!matched) usage_error("unknown option '%s'", a);
    i++;
  }
  return i;
}

/* ---------- text commands ---------- */

typedef int (*TextFn)(const char *in, size_t n, Buf *out); /* returns 0 or 1 (palindrome "no") */

static int run_text(int argc, char **argv, TextFn fn) {
  int status = 0;
  Buf out = {0};
  if (argc > 0) {
    Buf in = {0};
    buf_push(&in, 'x'); in.len = 0;
    for (int i = 0; i < argc; i++) {
      if (i > 0) buf_push(&in, ' ');
      buf_puts(&in, argv[i], strlen(argv[i]));
    }
    status |= fn(in.data, in.len, &out);
    buf_push(&out, '\n');
  } else {
    size_t n;
    char *all = read_stdin(&n);
    size_t start = 0;
    while (start < n) {
      size_t end = start;
      while (end < n && all[end] != '\n') end++;
      status |= fn(all + start, end - start, &out);
      buf_push(&out, '\n');
      start = end + 1;
    }
  }
  if (out.len) fwrite(out.data, 1, out.len, stdout);
  return status;
}

static int fn_upper(const char *in, size_t n, Buf *out) {
  for (size_t i = 0; i < n; i++) buf_push(out, (char)toupper((unsigned char)in[i]));
  return 0;
}

static int fn_lower(const char *in, size_t n, Buf *out) {
  for (size_t i = 0; i < n; i++) buf_push(out, (char)tolower((unsigned char)in[i]));
  return 0;
}

/* A word starts at the beginning of the text or after a space or a tab. */
static int fn_title(const char *in, size_t n, Buf *out) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)in[i];
    int starts = i == 0 || in[i - 1] == ' ' || in[i - 1] == '\t';
    buf_push(out, (char)(starts ? toupper(c) : tolower(c)));
  }
  return 0;
}

static int fn_reverse(const char *in, size_t n, Buf *out) {
  for (size_t i = n; i > 0; i--) buf_push(out, in[i - 1]);
  return 0;
}

static int shift_by;

static char shift_letter(char c, int by) {
  int k = ((by % 26) + 26) % 26;
  if (c >= 'a' && c <= 'z') return (char)('a' + (c - 'a' + k) % 26);
  if (c >= 'A' && c <= 'Z') return (char)('A' + (c - 'A' + k) % 26);
  return c;
}

static int fn_shift(const char *in, size_t n, Buf *out) {
  for (size_t i = 0; i < n; i++) buf_push(out, shift_letter(in[i], shift_by));
  return 0;
}

static int fn_slug(const char *in, size_t n, Buf *out) {
  int dash = 0;
  size_t before = out->len;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)tolower((unsigned char)in[i]);
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      if (dash && out->len > before) buf_push(out, '-');
      dash = 0;
      buf_push(out, (char)c);
    } else {
      dash = 1;
    }
  }
  return 0;
}

static int fn_palindrome(const char *in, size_t n, Buf *out) {
  Buf k = {0};
  buf_push(&k, 'x'); k.len = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)tolower((unsigned char)in[i]);
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) buf_push(&k, (char)c);
  }
  int yes = 1;
  for (size_t i = 0; i < k.len / 2; i++) if (k.data[i] != k.data[k.len - 1 - i]) yes = 0;
  free(k.data);
  buf_puts(out, yes ? "yes" : "no", yes ? 3 : 2);
  return yes ? 0 : 1;
}

static long pad_width;
static char pad_char = ' ';
static int pad_align; /* 0 left, 1 right, 2 center */

static int fn_pad(const char *in, size_t n, Buf *out) {
  size_t extra = (size_t)pad_width > n ? (size_t)pad_width - n : 0;
  size_t left = pad_align == 1 ? extra : pad_align == 2 ? extra / 2 : 0;
  for (size_t i = 0; i < left; i++) buf_push(out, pad_char);
  buf_puts(out, in, n);
  for (size_t i = left; i < extra; i++) buf_push(out, pad_char);
  return 0;
}

/* ---------- commands on standard input ---------- */

static void no_args(int argc, char **argv) {
  if (argc > 0) usage_error("reads standard input; unexpected argument '%s'", argv[0]);
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

static int cmd_count(int argc, char **argv) {
  int rest = parse_options(argc, argv, NULL, 0);
  no_args(argc - rest, argv + rest);
  size_t n;
  char *in = read_stdin(&n);
  long lines = 0, words = 0;
  int inword = 0;
  for (size_t i = 0; i < n; i++) {
    if (in[i] == '\n') lines++;
    if (is_space(in[i])) inword = 0;
    else if (!inword) { inword = 1; words++; }
  }
  printf("%ld %ld %zu\n", lines, words, n);
  return 0;
}

/* Greedy wrap of one paragraph's words; a word longer than the width stands alone. */
static void wrap_paragraph(char **words, size_t *lens, size_t count, long width, Buf *out) {
  size_t col = 0;
  for (size_t k = 0; k < count; k++) {
    if (col > 0 && col + 1 + lens[k] > (size_t)width) { buf_push(out, '\n'); col = 0; }
    if (col > 0) { buf_push(out, ' '); col++; }
    buf_puts(out, words[k], lens[k]);
    col += lens[k];
  }
  if (count > 0) buf_push(out, '\n');
}

static int cmd_wrap(int argc, char **argv) {
  Opt opts[] = { { "-w", "--width", 1, NULL, 0 } };
  int rest = parse_options(argc, argv, opts, 1);
  no_args(argc - rest, argv + rest);
  long width = opts[0].value ? parse_number(opts[0].value) : 40;
  if (width < 1) usage_error("width must be at least 1, got '%s'", opts[0].value);
  size_t n;
  char *in = read_stdin(&n);
  Buf out = {0};
  char **words = malloc((n + 1) * sizeof *words);
  size_t *lens = malloc((n + 1) * sizeof *lens);
  size_t count = 0;
  int paragraphs = 0;
  size_t i = 0;
  while (i <= n) {
    size_t line_end = i;
    while (line_end < n && in[line_end] != '\n') line_end++;
    int blank = 1;
    for (size_t k = i; k < line_end; k++) if (!is_space(in[k])) blank = 0;
    /* a blank line (or the end of the input) ends a paragraph */
    if (blank || line_end >= n) {
      for (size_t k = i; k < line_end; k++) {
        if (is_space(in[k])) continue;
        size_t w = k;
        while (w < line_end && !is_space(in[w])) w++;
        words[count] = in + k; lens[count] = w - k; count++;
        k = w;
      }
      if (count > 0) {
        if (paragraphs++ > 0) buf_push(&out, '\n');
        wrap_paragraph(words, lens, count, width, &out);
        count = 0;
      }
    } else {
      for (size_t k = i; k < line_end; k++) {
        if (is_space(in[k])) continue;
        size_t w = k;
        while (w < line_end && !is_space(in[w])) w++;
        words[count] = in + k; lens[count] = w - k; count++;
        k = w;
      }
    }
    i = line_end + 1;
  }
  if (out.len) fwrite(out.data, 1, out.len, stdout);
  return 0;
}

typedef struct { char *word; long count; } Freq;

static int freq_cmp(const void *a, const void *b) {
  const Freq *x = a, *y = b;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  return strcmp(x->word, y->word);
}

static int cmd_freq(int argc, char **argv) {
  Opt opts[] = { { "-n", "--top", 1, NULL, 0 } };
  int rest = parse_options(argc, argv, opts, 1);
  no_args(argc - rest, argv + rest);
  long top = -1;
  if (opts[0].value) {
    top = parse_number(opts[0].value);
    if (top < 1) usage_error("--top must be at least 1, got '%s'", opts[0].value);
  }
  size_t n;
  char *in = read_stdin(&n);
  Freq *list = NULL;
  size_t count = 0, cap = 0;
  size_t i = 0;
  while (i < n) {
    while (i < n && !isalpha((unsigned char)in[i])) i++;
    size_t s = i;
    while (i < n && isalpha((unsigned char)in[i])) i++;
    if (i == s) continue;
    char *w = malloc(i - s + 1);
    for (size_t k = 0; k < i - s; k++) w[k] = (char)tolower((unsigned char)in[s + k]);
    w[i - s] = '\0';
    size_t k;
    for (k = 0; k < count; k++) if (strcmp(list[k].word, w) == 0) break;
    if (k < count) { list[k].count++; free(w); continue; }
    if (count == cap) { cap = cap ? cap * 2 : 64; list = realloc(list, cap * sizeof *list); }
    list[count].word = w;
    list[count].count = 1;
    count++;
  }
  qsort(list, count, sizeof *list, freq_cmp);
  for (size_t k = 0; k < count && (top < 0 || (long)k < top); k++) printf("%ld %s\n", list[k].count, list[k].word);
  return 0;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_value(char c) {
  const char *p = c ? strchr(B64, c) : NULL;
  return p ? (int)(p - B64) : -1;
}

static int cmd_base64(int argc, char **argv) {
  Opt opts[] = { { "-d", "--decode", 0, NULL, 0 } };
  int rest = parse_options(argc, argv, opts, 1);
  no_args(argc - rest, argv + rest);
  size_t n;
  unsigned char *in = (unsigned char *)read_stdin(&n);
  if (!opts[0].seen) {
    for (size_t i = 0; i < n; i += 3) {
      unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
      putchar(B64[v >> 18 & 63]);
      putchar(B64[v >> 12 & 63]);
      putchar(i + 1 < n ? B64[v >> 6 & 63] : '=');
      putchar(i + 2 < n ? B64[v & 63] : '=');
    }
    putchar('\n');
    return 0;
  }
  /* decode: whitespace is ignored; the final '=' padding may be left out */
  Buf clean = {0};
  buf_push(&clean, 'x'); clean.len = 0;
  for (size_t i = 0; i < n; i++) if (!is_space((char)in[i])) buf_push(&clean, (char)in[i]);
  size_t len = clean.len;
  size_t pad = 0;
  while (len > 0 && clean.data[len - 1] == '=' && pad < 2) { len--; pad++; }
  if (pad > 0 && (len + pad) % 4 != 0) goto bad;
  if (len % 4 == 1) goto bad;
  Buf out = {0};
  unsigned acc = 0;
  int bits = 0;
  for (size_t i = 0; i < len; i++) {
    int v = b64_value(clean.data[i]);
    if (v < 0) goto bad;
    acc = acc << 6 | (unsigned)v;
    bits += 6;
    if (bits >= 8) { bits -= 8; buf_push(&out, (char)(acc >> bits & 0xff)); }
  }
  if (out.len) fwrite(out.data, 1, out.len, stdout);
  return 0;
bad:
  fprintf(stderr, "strkit: base64: invalid input\n");
  return 1;
}

/* ---------- roman ---------- */

static const int ROMAN_VALUES[] = { 1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1 };
static const char *ROMAN_DIGITS[] = { "M", "CM", "D", "CD", "C", "XC", "L", "XL", "X", "IX", "V", "IV", "I" };

static void to_roman(long v, char *out) {
  out[0] = '\0';
  for (int i = 0; i < 13; i++) while (v >= ROMAN_VALUES[i]) { strcat(out, ROMAN_DIGITS[i]); v -= ROMAN_VALUES[i]; }
}

static int cmd_roman(int argc, char **argv) {
  Opt opts[] = { { "-d", "--decode", 0, NULL, 0 } };
  int rest = parse_options(argc, argv, opts, 1);
  if (argc - rest == 0) usage_error("needs %s", opts[0].seen ? "a numeral" : "a number");
  if (argc - rest > 1) usage_error("takes one argument, got '%s' too", argv[rest + 1]);
  const char *arg = argv[rest];
  char buf[64];
  if (!opts[0].seen) {
    long v = parse_number(arg);
    if (v < 1 || v > 3999) { fprintf(stderr, "strkit: roman: out of range (1-3999)\n"); return 1; }
    to_roman(v, buf);
    printf("%s\n", buf);
    return 0;
  }
  /* a numeral is accepted only in its canonical form, in either case */
  char up[64];
  size_t len = strlen(arg);
  if (len == 0 || len >= sizeof up) goto bad;
  for (size_t i = 0; i <= len; i++) up[i] = (char)toupper((unsigned char)arg[i]);
  for (long v = 1; v <= 3999; v++) {
    to_roman(v, buf);
    if (strcmp(buf, up) == 0) { printf("%ld\n", v); return 0; }
  }
bad:
  fprintf(stderr, "strkit: roman: not a roman numeral: '%s'\n", arg);
  return 1;
}

/* ---------- main ---------- */

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs("usage: strkit COMMAND [OPTIONS] [TEXT...]\ntry 'strkit --help'\n", stderr);
    return 2;
  }
  const char *cmd = argv[1];
  cmd_name = cmd;
  int rest_argc = argc - 2;
  char **rest = argv + 2;
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) { fputs(USAGE, stdout); return 0; }
  if (strcmp(cmd, "--version") == 0) { printf("strkit %s\n", VERSION); return 0; }
  if (strcmp(cmd, "count") == 0) return cmd_count(rest_argc, rest);
  if (strcmp(cmd, "wrap") == 0) return cmd_wrap(rest_argc, rest);
  if (strcmp(cmd, "freq") == 0) return cmd_freq(rest_argc, rest);
  if (strcmp(cmd, "base64") == 0) return cmd_base64(rest_argc, rest);
  if (strcmp(cmd, "roman") == 0) return cmd_roman(rest_argc, rest);

  TextFn fn = NULL;
  int used = 0;
  if (strcmp(cmd, "upper") == 0) fn = fn_upper;
  else if (strcmp(cmd, "lower") == 0) fn = fn_lower;
  else if (strcmp(cmd, "title") == 0) fn = fn_title;
  else if (strcmp(cmd, "reverse") == 0) fn = fn_reverse;
  else if (strcmp(cmd, "slug") == 0) fn = fn_slug;
  else if (strcmp(cmd, "palindrome") == 0) fn = fn_palindrome;
  else if (strcmp(cmd, "rot13") == 0) { fn = fn_shift; shift_by = 13; }
  else if (strcmp(cmd, "caesar") == 0) {
    Opt opts[] = { { "-s", "--shift", 1, NULL, 0 } };
    used = parse_options(rest_argc, rest, opts, 1);
    if (!opts[0].value) usage_error("needs %s", "--shift N");
    shift_by = (int)parse_number(opts[0].value);
    fn = fn_shift;
  } else if (strcmp(cmd, "pad") == 0) {
    Opt opts[] = { { "-w", "--width", 1, NULL, 0 }, { "-a", "--align", 1, NULL, 0 }, { "-c", "--char", 1, NULL, 0 } };
    used = parse_options(rest_argc, rest, opts, 3);
    if (!opts[0].value) usage_error("needs %s", "--width N");
    pad_width = parse_number(opts[0].value);
    if (pad_width < 0) usage_error("width must not be negative, got '%s'", opts[0].value);
    if (opts[1].value) {
      if (strcmp(opts[1].value, "left") == 0) pad_align = 0;
      else if (strcmp(opts[1].value, "right") == 0) pad_align = 1;
      else if (strcmp(opts[1].value, "center") == 0) pad_align = 2;
      else usage_error("bad alignment '%s' (left, right or center)", opts[1].value);
    }
    if (opts[2].value) {
      if (strlen(opts[2].value) != 1) usage_error("--char needs one character, got '%s'", opts[2].value);
      pad_char = opts[2].value[0];
    }
    fn = fn_pad;
  } else {
    fprintf(stderr, "strkit: unknown command '%s'\n", cmd);
    return 2;
  }
  if (fn != fn_shift && fn != fn_pad) used = parse_options(rest_argc, rest, NULL, 0);
  return run_text(rest_argc - used, rest + used, fn);
}
