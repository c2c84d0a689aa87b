/**
 * The chat TUI's colours: ANSI SGR wrappers and the themes pi-tui's Editor, Markdown and
 * SelectList take. 16-colour codes only, so the terminal's palette decides the look.
 */
import type { EditorTheme, MarkdownTheme, SelectListTheme } from "@earendil-works/pi-tui";

const sgr = (open: number, close: number) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`;

/** Text styles used by the TUI's components. */
export const style = {
  bold: sgr(1, 22),
  dim: sgr(2, 22),
  italic: sgr(3, 23),
  underline: sgr(4, 24),
  strike: sgr(9, 29),
  red: sgr(31, 39),
  green: sgr(32, 39),
  yellow: sgr(33, 39),
  blue: sgr(34, 39),
  magenta: sgr(35, 39),
  cyan: sgr(36, 39),
  gray: sgr(90, 39),
  userBg: sgr(48, 49),
};

/** The user message background: a dark grey in 256 colours. */
export const userBackground = (text: string) => `\x1b[48;5;236m${text}\x1b[49m`;

/** The selection lists' theme (autocomplete, pickers). */
export const selectListTheme: SelectListTheme = {
  selectedPrefix: style.cyan,
  selectedText: (text) => style.bold(style.cyan(text)),
  description: style.gray,
  scrollInfo: style.gray,
  noMatch: style.gray,
};

/** The editor's theme. */
export const editorTheme: EditorTheme = { borderColor: style.gray, selectList: selectListTheme };

/** Markdown for assistant messages. */
export const markdownTheme: MarkdownTheme = {
  heading: (text) => style.bold(style.cyan(text)),
  link: style.underline,
  linkUrl: style.gray,
  code: style.yellow,
  codeBlock: (text) => text,
  codeBlockBorder: style.gray,
  quote: style.italic,
  quoteBorder: style.gray,
  hr: style.gray,
  listBullet: style.cyan,
  bold: style.bold,
  italic: style.italic,
  strikethrough: style.strike,
  underline: style.underline,
};
