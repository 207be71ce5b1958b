// A client of the soak: a WebSocket connection to one claw-server instance at a time (the `ws`
// package, the channel protocol), following one session. A controller runs task after task on
// it and answers its approvals; an observer only follows it (from whichever instance it reached).
// When its connection drops (the chaos driver's doing, its instance killed, or no `pong` from a
// frozen one) it connects again, to a random instance, and opens the session with the last seq
// it got: from there on it must get exactly the events it missed, in order.
//
// What it sees is checked as it arrives: every session event must be the seq after the last one
// (no gap, nothing twice). Everything it received is kept (seq → event) for the checks at the end.
import WebSocket from 'ws';

/** The `error` codes with which the server lets a session go while a client follows it. */
const sessionEndCodes = new Set(['lease_lost', 'store_unavailable', 'session_dropped']);
const terminal = new Set(['task_completed', 'task_failed', 'task_canceled']);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Canonical JSON (keys sorted): two events are the same event when these are equal. */
export function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export class SoakClient {
  /**
   * @param {object} options
   * @param {string} options.name e.g. `c07`
   * @param {string} options.sessionId
   * @param {'controller' | 'observer'} options.role
   * @param {() => Array<{name: string, http: number, token: string}>} options.instances the
   *   instances a client may connect to now
   * @param {() => number} options.random
   * @param {number} options.denyRate share of approvals answered `deny`
   * @param {number} options.thinkMs most time between the end of a task and the next prompt
   * @param {() => boolean} [options.leaderDone] an observer ends once this holds and it caught up
   * @param {() => number} [options.leaderSeq] the last seq its controller got
   */
  constructor(options) {
    this.name = options.name;
    this.sessionId = options.sessionId;
    this.role = options.role;
    this.options = options;
    this.random = options.random;
    /** The last seq received (events up to it were all received, unless skipped). */
    this.cursor = 0;
    /** seq → canonical JSON of every session event received. */
    this.received = new Map();
    /** seq → the later, different event received under a seq that came again (after a rollback). */
    this.reused = new Map();
    /** Problems seen on arrival: {kind, detail, at}. */
    this.anomalies = [];
    /** Ranges of seqs not received because the server refused the cursor (cursor_expired). */
    this.skipped = [];
    /** After a resync (see `session_opened`): events up to this seq may come again. */
    this.replayUpTo = undefined;
    /** Tasks that started and have not ended yet, as seen: task id → its task_started. */
    this.openTasks = new Map();
    this.state = undefined;
    this.outstanding = undefined;
    this.taskNumber = 0;
    this.attempt = 0;
    this.nextPromptAt = 0;
    this.stopping = false;
    this.finished = false;
    this.ws = undefined;
    this.connection = 0;
    this.stats = {
      /** Events received again after a resync (an open with an older cursor), as sent before. */
      replayed: 0,
      connections: 0,
      connectFailures: 0,
      dropped: 0,
      pongTimeouts: 0,
      closedByServer: 0,
      sessionEnded: 0,
      openErrors: 0,
      promptsSent: 0,
      promptErrors: 0,
      promptsLost: 0,
      tasksStarted: 0,
      tasksEnded: 0,
      completed: 0,
      failed: 0,
      canceled: 0,
      approvalsAnswered: 0,
      approvalsDenied: 0,
      cursorExpired: 0,
      errors: {},
    };
    /** When this client's first task started and its last one ended (for tasks per second). */
    this.firstTaskAt = undefined;
    this.traceLines = [];
    /** The tags of the prompts this client sent. */
    this.tags = new Set();
  }

  /** Runs until `stop()` was called and the session is idle with every task ended. */
  async run() {
    while (!this.finished) {
      const choices = this.options.instances();
      if (choices.length === 0) {
        await sleep(200);
        continue;
      }
      const instance = choices[Math.floor(this.random() * choices.length)];
      try {
        await this.follow(instance);
      } catch (error) {
        this.stats.connectFailures += 1;
        this.note('connect', `${instance.name}: ${error.message}`);
      }
      if (!this.finished) await sleep(50 + Math.floor(this.random() * 250));
    }
  }

  /** No new task from now on; the client ends once the session's tasks ended. */
  stop() {
    this.stopping = true;
  }

  /** Ends the client now, whatever it waits for (the drain's time is up). */
  abandon() {
    this.finished = true;
    this.ws?.terminate();
  }

  /** The chaos driver's doing: the connection is cut, as a network would. */
  drop() {
    if (this.ws === undefined || this.ws.readyState !== WebSocket.OPEN) return false;
    this.stats.dropped += 1;
    this.ws.terminate();
    return true;
  }

  get connected() {
    return this.ws !== undefined && this.ws.readyState === WebSocket.OPEN;
  }

  note(kind, detail) {
    this.stats.errors[kind] = (this.stats.errors[kind] ?? 0) + 1;
    this.lastNote = `${kind}: ${detail}`;
  }

  /** A line of the client's trace (dumped with the evidence when a check fails). */
  trace(line) {
    this.traceLines.push(`${new Date().toISOString()} ${line}`);
    if (this.traceLines.length > 20_000) this.traceLines.splice(0, 5_000);
  }

  anomaly(kind, detail) {
    this.trace(`ANOMALY ${kind}: ${detail}`);
    const at = new Date().toISOString();
    const { instanceName: instance, connection } = this;
    this.anomalies.push({ kind, detail, at, instance, connection });
  }

  /** One connection: hello, open (with the cursor), then events until it closes. */
  async follow(instance) {
    const ws = new WebSocket(`ws://127.0.0.1:${instance.http}/ws`, { perMessageDeflate: false, handshakeTimeout: 3000 });
    ws.on('error', () => undefined);
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        ws.terminate();
        reject(new Error('no WebSocket within 3 s'));
      }, 3000);
      ws.once('open', () => {
        clearTimeout(timer);
        resolve();
      });
      ws.once('close', () => {
        clearTimeout(timer);
        reject(new Error('closed before open'));
      });
    });
    this.ws = ws;
    this.instanceName = instance.name;
    this.connection += 1;
    this.stats.connections += 1;
    this.trace(`connected #${this.connection} to ${instance.name} (port ${instance.http})`);
    const link = {
      opened: false,
      /** The cursor the last `open` was sent with (undefined: opened for its history). */
      openedAfter: undefined,
      lastPong: Date.now(),
      openAttempts: 0,
      /**
       * The cursors of the opens sent and not answered yet (undefined: opened for its history),
       * oldest first, and when the last one was sent.
       */
      pendingOpens: [],
      lastOpenAt: 0,
      /** A reopen is scheduled (its timer runs): later errors of the old attachment are stale. */
      reopening: false,
      closedByUs: false,
    };
    const send = (message) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
    };
    const open = (withCursor = true) => {
      // One open at a time: the errors of requests sent before an end each say the end again,
      // and an open for each would be a resync each (CH-9), the session's events sent again.
      if (link.pendingOpens.length > 0 && Date.now() - link.lastOpenAt < 2000) return;
      link.pendingOpens.push(withCursor ? this.cursor : undefined);
      link.lastOpenAt = Date.now();
      link.opened = false;
      link.reopening = false;
      link.openAttempts += 1;
      link.openedAfter = withCursor ? this.cursor : undefined;
      this.trace(`open after=${withCursor ? this.cursor : '(none)'}`);
      send({
        type: 'open',
        session_id: this.sessionId,
        role: this.role,
        ...(withCursor ? { after: this.cursor } : {}),
      });
    };
    const closed = new Promise((resolve) => ws.once('close', (...args) => resolve(args)));
    ws.on('message', (data) => {
      let event;
      try {
        event = JSON.parse(data.toString('utf8'));
      } catch {
        this.anomaly('bad_json', data.toString('utf8').slice(0, 200));
        return;
      }
      this.onEvent(event, { link, send, open });
    });
    send({ type: 'hello', token: instance.token, protocol: 1 });
    // The client's own clock: pings, the next prompt, a prompt that got nowhere.
    const tick = setInterval(() => {
      const now = Date.now();
      if (now - link.lastPong > 3000) {
        this.stats.pongTimeouts += 1;
        link.closedByUs = true;
        ws.terminate();
        return;
      }
      send({ type: 'ping' });
      if (link.opened) this.maybePrompt(send, now);
      if (this.outstanding !== undefined && now - this.outstanding.sentAt > 20_000) {
        this.stats.promptsLost += 1;
        this.outstanding = undefined;
      }
      if (this.isDone()) {
        this.finished = true;
        link.closedByUs = true;
        ws.close();
      }
    }, 500);
    const [code] = await closed;
    this.trace(`closed #${this.connection} (${code}${link.closedByUs ? ', by the client' : ''})`);
    clearInterval(tick);
    if (!link.closedByUs && !this.finished) this.stats.closedByServer += 1;
    this.ws = undefined;
  }

  isDone() {
    if (!this.stopping) return false;
    if (this.role === 'observer') {
      const leaderSeq = this.options.leaderSeq?.() ?? 0;
      return this.options.leaderDone?.() === true && this.cursor >= leaderSeq;
    }
    return this.openTasks.size === 0 && this.state === 'idle' && this.outstanding === undefined;
  }

  maybePrompt(send, now) {
    if (this.role !== 'controller' || this.stopping) return;
    if (this.state !== 'idle' || this.openTasks.size > 0 || this.outstanding !== undefined) return;
    if (now < this.nextPromptAt) return;
    this.taskNumber += 1;
    this.attempt += 1;
    const tag = `${this.name}t${this.taskNumber}a${this.attempt}`;
    this.tags.add(tag);
    this.outstanding = { tag, sentAt: now };
    this.stats.promptsSent += 1;
    this.trace(`prompt ${tag}`);
    send({ type: 'prompt', session_id: this.sessionId, content: `[soak ${tag}] read, write and run the markers` });
  }

  onEvent(event, { link, send, open }) {
    switch (event.type) {
      case 'welcome':
        open(true);
        return;
      case 'pong':
        link.lastPong = Date.now();
        return;
      case 'session_opened':
        link.opened = true;
        link.openAttempts = 0;
        {
          // An open with a cursor behind this client's (sent before the events after it came)
          // is a resync: the events up to the current cursor come again, as CH-9 says.
          const after = link.pendingOpens.shift();
          this.replayUpTo = after !== undefined && after < this.cursor ? this.cursor : undefined;
        }
        this.trace(`session_opened state=${event.state} last_seq=${event.last_seq} pending=${event.pending_approvals?.length ?? 0}`);
        this.state = event.state;
        if (link.openedAfter !== undefined && event.last_seq < link.openedAfter) {
          this.anomaly('opened_behind_cursor', `session_opened last_seq ${event.last_seq} < cursor ${link.openedAfter}`);
        }
        for (const request of event.pending_approvals ?? []) this.answer(request, send);
        return;
      case 'history':
        this.trace(`history seq=${event.seq} messages=${event.messages.length}`);
        // Opened without a cursor (after cursor_expired): the live events follow after `seq`.
        if (event.seq > this.cursor) {
          this.skipped.push({ from: this.cursor + 1, to: event.seq });
          // The tasks it saw start may have ended in the events it did not get: from here on
          // the session's state (`session_opened`, then `state` events) says whether one runs.
          this.openTasks.clear();
        }
        if (event.seq < this.cursor) {
          // The session ends before events this client received: the server took them back.
          // What comes next under those seqs is compared with what was received (seq_reused).
          this.anomaly('rolled_back', `the session's history ends at seq ${event.seq}, but this client received events up to ${this.cursor}`);
          this.openTasks.clear();
        }
        this.cursor = event.seq;
        return;
      case 'error':
        this.onError(event, { link, send, open });
        return;
      case 'tool_progress':
      case 'server_stopping':
      case 'session_closed':
        return;
      default:
        break;
    }
    if (typeof event.seq !== 'number' || event.session_id !== this.sessionId) {
      this.anomaly('unexpected_message', JSON.stringify(event).slice(0, 300));
      return;
    }
    this.onSessionEvent(event, send);
  }

  onSessionEvent(event, send) {
    const text = canonical(event);
    const expected = this.cursor + 1;
    this.trace(`${event.seq} ${event.type}${event.task_id ? ` ${event.task_id}` : ''}${event.tool_call_id ? ` ${event.tool_call_id}` : ''}${event.state ? ` ${event.state}` : ''}${event.code ? ` ${event.code}` : ''}`);
    if (event.seq < expected) {
      const before = this.received.get(event.seq);
      if (this.replayUpTo !== undefined && event.seq <= this.replayUpTo && before === text) {
        this.stats.replayed += 1;
        if (event.seq === this.replayUpTo) this.replayUpTo = undefined;
        return;
      }
      if (before === undefined) this.anomaly('out_of_order', `seq ${event.seq} after ${this.cursor}`);
      else if (before === text) this.anomaly('duplicate', `seq ${event.seq} received again (cursor ${this.cursor})`);
      else this.anomaly('seq_reused', `seq ${event.seq} received again as another event: first ${before.slice(0, 300)} then ${text.slice(0, 300)}`);
      return;
    }
    if (event.seq > expected) {
      this.anomaly('gap', `seq ${event.seq} after ${this.cursor}: ${event.seq - expected} missing`);
    }
    this.cursor = event.seq;
    const before = this.received.get(event.seq);
    if (before === undefined) this.received.set(event.seq, text);
    else if (before !== text) {
      // After a rollback: the seq comes again as another event.
      this.anomaly('seq_reused', `seq ${event.seq} received again as another event: first ${before.slice(0, 300)} then ${text.slice(0, 300)}`);
      this.reused.set(event.seq, text);
    }
    switch (event.type) {
      case 'task_started':
        this.openTasks.set(event.task_id, event);
        this.stats.tasksStarted += 1;
        this.firstTaskAt ??= Date.now();
        if (this.outstanding !== undefined && event.content.includes(`[soak ${this.outstanding.tag}]`)) {
          this.outstanding = undefined;
        }
        return;
      case 'state':
        this.state = event.state;
        return;
      case 'approval_request':
        this.answer(event, send);
        return;
      default:
        break;
    }
    if (terminal.has(event.type)) {
      this.openTasks.delete(event.task_id);
      this.stats.tasksEnded += 1;
      if (event.type === 'task_completed') this.stats.completed += 1;
      else if (event.type === 'task_failed') this.stats.failed += 1;
      else this.stats.canceled += 1;
      this.lastTaskEndAt = Date.now();
      this.nextPromptAt = Date.now() + Math.floor(this.random() * this.options.thinkMs);
    }
  }

  answer(request, send) {
    if (this.role !== 'controller') return;
    const deny = this.random() < this.options.denyRate;
    this.stats.approvalsAnswered += 1;
    if (deny) this.stats.approvalsDenied += 1;
    send({
      type: 'approval_response',
      session_id: this.sessionId,
      request_id: request.request_id,
      decision: deny ? 'deny' : 'allow_once',
    });
  }

  onError(event, { link, open }) {
    const code = event.code;
    this.note(`error:${code}`, event.message);
    this.trace(`error ${code}: ${event.message}`);
    if (code === 'cursor_expired') {
      this.stats.cursorExpired += 1;
      this.anomaly('cursor_expired', `cursor ${this.cursor}: ${event.message} (oldest ${event.oldest_seq})`);
      link.pendingOpens.shift();
      open(false);
      return;
    }
    if (sessionEndCodes.has(code) && link.opened) {
      // The server let the session go while this client followed it: open it again.
      this.stats.sessionEnded += 1;
      link.opened = false;
      link.reopening = true;
      setTimeout(() => open(true), 100 + Math.floor(this.random() * 300));
      return;
    }
    // The same end told again (the answer to a request sent before it): the reopen is on its way.
    // Opening twice would be a resync (CH-9: the second open's cursor counts), which hands this
    // client the events the first open sent it again.
    if (sessionEndCodes.has(code) && link.reopening) return;
    if (!link.opened) {
      // The answer to the open, unless it is another request's end told again (then the open
      // is still on its way, and no second one goes before it or 2 s have passed).
      if (!sessionEndCodes.has(code)) link.pendingOpens.shift();
      // The open was refused (owned elsewhere and not servable yet, store away, …): again, and
      // after a few tries from another instance.
      this.stats.openErrors += 1;
      if (link.openAttempts >= 5) {
        link.closedByUs = true;
        this.ws?.close();
        return;
      }
      setTimeout(() => open(true), 200 + Math.floor(this.random() * 400));
      return;
    }
    if (code === 'approval_not_pending') return;
    if (this.outstanding !== undefined) {
      // Most likely the answer to the prompt: it did not start a task.
      this.stats.promptErrors += 1;
      this.outstanding = undefined;
      this.nextPromptAt = Date.now() + 200;
    }
  }
}
