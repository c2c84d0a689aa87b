/**
 * `/tree` in the chat TUI (pi's tree navigator): `arbor tree`'s rows to move through (↑/↓, PageUp/Down, Home/End, Tab to the next label); Enter
 * checks out, `s` with a summary, `f` with the files; `l` edits a label; Esc or q closes.
 */
import { Input, matchesKey, truncateToWidth, type Component, type Focusable } from "@earendil-works/pi-tui";
import { style } from "./theme.ts";

/** A row of the tree. */
export interface TreeRow {
  id: string;
  text: string;
  labelled: boolean;
  leaf: boolean;
}

/** Parses `renderTree` output into rows (the id follows the marker and the branch drawing). */
export function treeRows(rendered: string): TreeRow[] {
  return rendered
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const id = line.slice(2).replace(/^[│├└─\s]+/, "").split(" ")[0];
      return { id, text: line, labelled: / \[[^\]]+\]$/.test(line), leaf: line.startsWith("* ") };
    });
}

/** What the navigator asks its owner to do. */
export interface TreeActions {
  checkout(id: string, options: { summarize: boolean; files: boolean }): void;
  label(id: string, label: string | undefined): Promise<void>;
  close(): void;
  /** The tree as `renderTree` draws it, read again after a label. */
  load(): string;
}

/** The navigator component (see the module contract). */
export class TreeNavigator implements Component, Focusable {
  private rows: TreeRow[];
  private selected: number;
  private input: Input | undefined;
  private _focused = false;

  constructor(
    private readonly actions: TreeActions,
    private readonly height: () => number,
  ) {
    this.rows = treeRows(actions.load());
    this.selected = Math.max(0, this.rows.findIndex((row) => row.leaf));
  }

  get focused(): boolean {
    return this._focused;
  }

  set focused(value: boolean) {
    this._focused = value;
    if (this.input) this.input.focused = value;
  }

  invalidate(): void {
    this.input?.invalidate();
  }

  private move(by: number): void {
    this.selected = Math.min(this.rows.length - 1, Math.max(0, this.selected + by));
  }

  handleInput(data: string): void {
    if (this.input) {
      if (matchesKey(data, "escape")) {
        this.input = undefined;
        return;
      }
      this.input.handleInput(data);
      return;
    }
    const row = this.rows[this.selected];
    if (matchesKey(data, "up") || data === "k") this.move(-1);
    else if (matchesKey(data, "down") || data === "j") this.move(1);
    else if (matchesKey(data, "pageUp")) this.move(-this.visible());
    else if (matchesKey(data, "pageDown")) this.move(this.visible());
    else if (matchesKey(data, "home")) this.selected = 0;
    else if (matchesKey(data, "end")) this.selected = this.rows.length - 1;
    else if (matchesKey(data, "tab")) {
      for (let step = 1; step <= this.rows.length; step++) {
        const index = (this.selected + step) % this.rows.length;
        if (this.rows[index].labelled) {
          this.selected = index;
          break;
        }
      }
    } else if (matchesKey(data, "escape") || data === "q") this.actions.close();
    else if (!row) return;
    else if (matchesKey(data, "enter")) this.actions.checkout(row.id, { summarize: false, files: false });
    else if (data === "s") this.actions.checkout(row.id, { summarize: true, files: false });
    else if (data === "f") this.actions.checkout(row.id, { summarize: false, files: true });
    else if (data === "l") {
      const input = new Input();
      const current = / \[([^\]]+)\]$/.exec(row.text)?.[1];
      if (current) input.setValue(current);
      input.focused = this._focused;
      input.onSubmit = (value) => {
        this.input = undefined;
        void this.actions.label(row.id, value.trim() || undefined).then(() => {
          this.rows = treeRows(this.actions.load());
          this.selected = Math.max(0, this.rows.findIndex((item) => item.id === row.id));
        });
      };
      this.input = input;
    }
  }

  private visible(): number {
    return Math.max(3, Math.min(this.rows.length, this.height() - 8));
  }

  render(width: number): string[] {
    const visible = this.visible();
    const start = Math.max(0, Math.min(this.selected - Math.floor(visible / 2), this.rows.length - visible));
    const lines = [truncateToWidth(style.bold("session tree") + style.gray(" ↑↓ move · Enter checkout · s with summary · f with files · l label · Tab next label · Esc close"), width)];
    for (const [offset, row] of this.rows.slice(start, start + visible).entries()) {
      const chosen = start + offset === this.selected;
      const text = truncateToWidth(`${chosen ? "›" : " "}${row.text}`, width);
      lines.push(chosen ? style.bold(style.cyan(text)) : row.labelled ? style.yellow(text) : text);
    }
    if (this.rows.length > visible) lines.push(style.gray(truncateToWidth(`  (${this.selected + 1}/${this.rows.length})`, width)));
    if (this.input) {
      lines.push(truncateToWidth(style.gray(`label for ${this.rows[this.selected]?.id} (empty clears, Esc cancels):`), width));
      lines.push(...this.input.render(width));
    }
    return lines;
  }
}
