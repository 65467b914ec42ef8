/**
 * A separate process claiming workspaces: `node --import tsx ensureWorktreeChild.ts <repo>
 * <id>…` runs ensureWorktree for every id at once and prints one JSON line of the failures (an empty
 * list when all worked). Several of these at once race for git's locks as several `baton mcp` would.
 */
import { ensureWorktree } from '../../mcp-server/workspaces/worktree';

const [repo = '', ...ids] = process.argv.slice(2);
void Promise.allSettled(ids.map(cardId => ensureWorktree({ repo, cardId }))).then(results => {
	const failures = results.flatMap(r => (r.status === 'rejected' ? [String(r.reason)] : []));
	process.stdout.write(`${JSON.stringify(failures)}\n`);
});
