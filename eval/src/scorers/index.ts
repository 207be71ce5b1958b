import type { ScorerName } from '../case.js';
import { scoreBoundary } from './boundary.js';
import { scoreBudget } from './budget.js';
import { scoreCompaction } from './compaction.js';
import { scorePairing } from './pairing.js';
import { scoreReports } from './reports.js';
import { scoreRequests } from './requests.js';
import { scoreScript } from './script.js';
import { scoreState } from './state.js';
import { scoreTrace } from './trace.js';
import { scoreTrajectory } from './trajectory.js';
import type { Scorer } from './types.js';

/** The scorers of every run, by name (EVAL-3). */
export const defaultScorers: Readonly<Record<ScorerName, Scorer>> = {
  script: scoreScript,
  state: scoreState,
  trajectory: scoreTrajectory,
  boundary: scoreBoundary,
  pairing: scorePairing,
  budget: scoreBudget,
  trace: scoreTrace,
  requests: scoreRequests,
  compaction: scoreCompaction,
  reports: scoreReports,
};

export { result, type ScoreContext, type ScoreResult, type Scorer } from './types.js';
export { runEvidence, negativeResult, type Evidence } from './evidence.js';
export { pairingProblems } from './pairing.js';
export { scriptedAfterFirstMs, spanTreeProblems } from './trace.js';
export { describeMessages } from './script.js';
export { conversations, isSummaryRequest, systemOf } from './requests.js';
export { reportedThinking } from './thinking.js';
