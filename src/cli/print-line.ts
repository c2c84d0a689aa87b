/** How the CLI's commands print a line of their output on stdout: the text, and a newline unless it ends with one. */
export function print(text: string): void {
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}
