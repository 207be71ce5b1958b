import { compactionText } from '../state/selectors.js';
import type { CompactionItem } from '../state/types.js';

/**
 * Where the conversation was compacted (CMP-5): a rule across the conversation with one line of
 * what was done, the summary the model wrote folded below it (a native, keyboard-usable toggle;
 * plain text, like the answers), and why the summary failed when it did.
 */
export function CompactionDivider({ item }: { item: CompactionItem }) {
  return (
    <div data-testid="compaction" className="compaction">
      <p className="compaction-line">{compactionText(item)}</p>
      {item.summary === undefined ? null : (
        <details className="compaction-details">
          <summary>summary</summary>
          <p className="compaction-summary">{item.summary}</p>
        </details>
      )}
      {item.error === undefined ? null : (
        <p className="compaction-error">
          {`no summary: ${item.error}`}
        </p>
      )}
    </div>
  );
}
