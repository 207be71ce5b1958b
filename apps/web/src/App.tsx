// The console's sessions, streaming and approval cards arrive with the web console issue.
export function App() {
  return (
    <main>
      <h1>claw console</h1>
      <p>The web console is not built yet: sessions and approvals arrive with the server.</p>
    </main>
  );
}
