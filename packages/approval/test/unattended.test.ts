import { describe, expect, it } from 'vitest';
import { UnattendedApprovals, type ApprovalPrompt } from '../src/index.js';

const prompt: ApprovalPrompt = {
  requestId: 'r1',
  sessionId: 's1',
  toolName: 'bash',
  risk: 'dangerous',
  reason: 'runs a command',
  arguments: '{"command":"ls"}',
  workDir: '/workspace',
};

describe('UnattendedApprovals', () => {
  it('denies at once, saying nobody was asked, and explains it to whoever watches', async () => {
    const explained: string[] = [];
    const handler = new UnattendedApprovals({ explain: (asked) => void explained.push(asked.requestId) });
    const answer = await handler.approve(prompt, new AbortController().signal);
    expect(answer).toEqual({
      decision: 'deny',
      reason: 'nobody was asked: this run is unattended, so calls that need approval are denied (runs a command)',
    });
    expect(explained).toEqual(['r1']);
  });

  it('rejects with the reason of an aborted signal, explaining nothing', async () => {
    const reason = new Error('canceled');
    const explained: string[] = [];
    const handler = new UnattendedApprovals({ explain: () => void explained.push('x') });
    await expect(handler.approve(prompt, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(explained).toEqual([]);
    await expect(new UnattendedApprovals().approve(prompt, new AbortController().signal)).resolves.toMatchObject({ decision: 'deny' });
  });
});
