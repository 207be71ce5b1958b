import { describe, expect, it } from 'vitest';
import { Listeners } from '../src/index.js';

describe('Listeners', () => {
  it('tells every listener, in the order they were added, until each is removed', () => {
    const listeners = new Listeners<number>();
    const heard: string[] = [];
    const removeA = listeners.add((value) => void heard.push(`a${value}`));
    listeners.add((value) => void heard.push(`b${value}`));
    listeners.emit(1);
    removeA();
    removeA();
    listeners.emit(2);
    expect(heard).toEqual(['a1', 'b1', 'b2']);
    expect(listeners.size).toBe(1);
    listeners.clear();
    listeners.emit(3);
    expect(heard).toEqual(['a1', 'b1', 'b2']);
  });

  it('lets a listener that throws miss that value alone; the emitter does not fail', () => {
    const listeners = new Listeners<string>();
    const heard: string[] = [];
    let failing = true;
    listeners.add(() => {
      if (failing) throw new Error('listener failed');
      heard.push('first');
    });
    listeners.add((value) => void heard.push(value));
    expect(() => listeners.emit('x')).not.toThrow();
    failing = false;
    listeners.emit('y');
    expect(heard).toEqual(['x', 'first', 'y']);
  });

  it('keeps one function added twice as two listeners, removed one at a time', () => {
    const listeners = new Listeners<number>();
    let count = 0;
    const listener = (): void => void (count += 1);
    const removeFirst = listeners.add(listener);
    listeners.add(listener);
    listeners.emit(0);
    removeFirst();
    listeners.emit(0);
    expect(count).toBe(3);
  });

  it('does not tell a listener added while a value is being told', () => {
    const listeners = new Listeners<number>();
    const heard: number[] = [];
    listeners.add(() => {
      listeners.add((value) => void heard.push(value));
    });
    listeners.emit(1);
    expect(heard).toEqual([]);
    listeners.emit(2);
    expect(heard).toEqual([2]);
  });
});
