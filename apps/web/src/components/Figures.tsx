import { formatBudgets, formatCost, formatTokens, formatTtft } from '../state/selectors.js';
import type { Figures as FiguresData } from '../state/types.js';

const cachedHint = 'cached: prompt tokens the server read from its prompt cache (priced lower)';

/** Tokens, cost, budgets left and time to first token of the last reply. */
export function Figures({ figures }: { figures: FiguresData }) {
  return (
    <dl data-testid="figures" className="figures">
      <div>
        <dt>tokens</dt>
        <dd title={(figures.sessionCachedTokens ?? 0) > 0 ? cachedHint : undefined}>
          {formatTokens(figures)}
        </dd>
      </div>
      <div>
        <dt>cost</dt>
        <dd>{formatCost(figures)}</dd>
      </div>
      <div>
        <dt>first token</dt>
        <dd>{formatTtft(figures)}</dd>
      </div>
      <div>
        <dt>budgets left</dt>
        <dd>{formatBudgets(figures)}</dd>
      </div>
    </dl>
  );
}
