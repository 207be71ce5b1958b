import type { Style } from './style.js';
import { visibleOutput } from './terminal-text.js';

/** Lines of a model call's thinking shown without `--verbose` (REAL-4). */
export const thinkingPreviewLines = 3;
/** Longer lines of thinking are wrapped at this width (characters). */
export const thinkingLineChars = 120;

export interface ThinkingViewOptions {
  /** Writes one line of activity (on a line of its own). */
  show: (line: string) => Promise<void>;
  style: Style;
  /** Show all of it (`--verbose`), not only its first lines. */
  verbose: boolean;
}

/**
 * How the terminal shows a model's reasoning (REAL-4): dimmed lines (`  ┊ …`) apart from the
 * answer, as they come (a long line is wrapped, so a model that thinks in one long paragraph is
 * still seen thinking). Without `verbose` only the first {@link thinkingPreviewLines} lines of
 * each model call's thinking are shown, then one line says how many more there were. Blank lines
 * are left out. Text is made safe to print as any text from the model is.
 */
export class ThinkingView {
  private partial = '';
  private shown = 0;
  private hidden = 0;

  constructor(private readonly options: ThinkingViewOptions) {}

  /** True while a model call's thinking is being shown (it has had a delta and not ended). */
  get active(): boolean {
    return this.shown + this.hidden > 0 || this.partial !== '';
  }

  /** A piece of the reasoning. */
  async delta(text: string): Promise<void> {
    this.partial += visibleOutput(text.replaceAll('\r\n', '\n'));
    for (;;) {
      const newline = this.partial.indexOf('\n');
      if (newline >= 0 && newline <= thinkingLineChars) {
        await this.line(this.partial.slice(0, newline));
        this.partial = this.partial.slice(newline + 1);
        continue;
      }
      if (this.partial.length <= thinkingLineChars) return;
      // Wrap at the last space that fits, else cut.
      const space = this.partial.lastIndexOf(' ', thinkingLineChars);
      const end = space > thinkingLineChars / 2 ? space : thinkingLineChars;
      await this.line(this.partial.slice(0, end));
      this.partial = this.partial.slice(end).replace(/^ /, '');
    }
  }

  /** The thinking of this model call is over (its answer or a tool call came, or it ended). */
  async end(): Promise<void> {
    if (this.partial !== '') await this.line(this.partial);
    this.partial = '';
    const { hidden } = this;
    this.shown = 0;
    this.hidden = 0;
    if (hidden > 0) {
      await this.options.show(this.options.style.dim(
        `  ┊ … ${hidden} more line${hidden === 1 ? '' : 's'} of thinking (--verbose shows all of it)`,
      ));
    }
  }

  /** Forgets a model call's thinking that never ended (its task was canceled). */
  reset(): void {
    this.partial = '';
    this.shown = 0;
    this.hidden = 0;
  }

  private async line(text: string): Promise<void> {
    if (text.trim() === '') return;
    if (!this.options.verbose && this.shown >= thinkingPreviewLines) {
      this.hidden += 1;
      return;
    }
    this.shown += 1;
    await this.options.show(this.options.style.dim(`  ┊ ${text.trimEnd()}`));
  }
}
