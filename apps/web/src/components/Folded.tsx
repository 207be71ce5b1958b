/** Long text shows its first lines; the rest opens on demand (a native, keyboard-usable toggle). */
export function Folded({
  text,
  lines = 12,
  className,
}: {
  text: string;
  lines?: number;
  className?: string;
}) {
  const all = text.split('\n');
  if (all.length <= lines + 2) return <pre className={className}>{text}</pre>;
  return (
    <div className="folded">
      <pre className={className}>{all.slice(0, lines).join('\n')}</pre>
      <details>
        <summary>
          {all.length - lines}
          {' '}
          more lines
        </summary>
        <pre className={className}>{all.slice(lines).join('\n')}</pre>
      </details>
    </div>
  );
}
