/**
 * The one list of what Baton relies on in PGlite beyond its documented API, and the exact version it
 * was checked against: the upgrade gate. package.json pins @electric-sql/pglite to this version, and
 * test/core/pgliteInternals.test.ts fails when the installed PGlite is another one, so an upgrade
 * starts by re-checking each point below against the new PGlite's source (and the proofs named with
 * them), then moving the pin here and in package.json together. Text and one constant: nothing runs.
 *
 * Kept because each buys ≥ 15 % on a figure users feel (docs/benchmarks.md, "Fast paths, side by
 * side"); a mechanism can be switched off (core/backlog/fastPaths.ts) to run the general path instead.
 *
 * The wire path (pgWire.ts, pglite.ts `send` / `sendNow`; switch `wire`):
 * - `execProtocolRawStream(message, { syncToFs, onRawData })` runs the whole exchange, every backend
 *   message included, before it returns its promise; the promise is async only for the file-system
 *   sync. Running a hot statement without PGlite's locks when nothing else is under way relies on it,
 *   and the reply is read once the promise settles.
 * - `onRawData` hands views of WASM memory that the next write reuses: each chunk is copied.
 * - `syncToFs: false` skips a sync that is empty for the two file systems Baton uses (NodeFS writes
 *   through to the data dir; memory:// has nothing to sync). The SIGKILL crash proof
 *   (test/core/crash.test.ts) checks that acknowledged writes survive.
 * - `_runExclusiveTransaction` and `_runExclusiveQuery` (underscore-private) are the two locks every
 *   `query()` takes; a statement sent while another call is under way takes both, in that order.
 * - `pglite.parsers` maps a type OID to the function that turns a column's text into its value; rows
 *   read straight from the reply's bytes go through it, so values come back exactly as `query()`'s.
 * - `protocol.Parser` (exported) turns an ErrorResponse into PGlite's own DatabaseError with SQLSTATE.
 * - Inside `pglite.transaction()`, `tx.exec('EXECUTE name(…)')` runs a statement this instance
 *   prepared by the extended protocol (the session's prepared statements are shared).
 * Proofs: test/core/store.test.ts (rows, parameters and errors round-trip as through `query()`; a
 * statement sent while a transaction is open waits for it), test/proofs/fastPathDifferential.test.ts.
 *
 * The hot statements and the one-call hand-over rely on nothing beyond the documented API: on PGlite
 * only on its having one connection, which is why their pick takes no row lock.
 */

/** The PGlite these internals were checked against; package.json pins the same exact version. */
export const pgliteInternalsCheckedWith = '0.5.16';
