import { useEffect, useState } from 'react';
import { modelWaitText } from '../state/model-wait.js';

/**
 * Says that the session's model call has been silent for a while (`waiting for the model: 12 s
 * so far`), counting each second, as the terminal does; nothing while the model answers.
 */
export function ModelWait({ since }: { since: number | undefined }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (since === undefined) return undefined;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [since]);
  const text = modelWaitText(since, now);
  if (text === undefined) return null;
  return (
    <p className="notice-line model-wait" role="status" data-testid="model-wait">
      {`… ${text}`}
    </p>
  );
}
