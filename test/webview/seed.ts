/**
 * A realistic small backlog for the board tests and docs/board.png, made through the real hub by
 * real clients: a planner creates cards, three agents (each its own connection and identity) claim
 * and report progress, one card is blocked, some are done, one waits on a dependency, one waits on
 * files another agent's claim holds, one waits for a human's review and one agent has asked a
 * question. The cards belong to two projects (the shop's API and its web front end; one card has
 * none), and the claimed ones name the files they touch (their scope).
 */
import type { CreateCardInput } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { client } from '../helpers/hub';

export interface Seeded {
	/** Where each seeded card must show up (column id of the board). */
	columns: Record<string, 'ready' | 'inProgress' | 'review' | 'blocked' | 'done'>;
	counts: { ready: number; inProgress: number; review: number; blocked: number; done: number };
	/** Closes the agents' connections. */
	close(): Promise<void>;
}

const hostileBody = [
	'## Steps',
	'',
	'1. Open the page',
	'2. Paste the title',
	'',
	'<script>alert(2)</script>',
	'<img src=x onerror=alert(3)>',
	'[click me](javascript:alert(4))',
	'<iframe src="https://example.com"></iframe>',
].join('\n');

const api = 'github.com/acme/api';
const web = 'github.com/acme/web';

const cards: CreateCardInput[] = [
	{ id: 'API-1', title: 'Health check endpoint for the load balancer', phase: 'api', priority: 5, project: api },
	{ id: 'WEB-2', title: 'Login page layout', phase: 'web', priority: 4, project: web },
	{ id: 'INF-0', title: 'Dockerfile for the API service', phase: 'infra', priority: 4, project: api },
	{
		id: 'API-4',
		title: 'Add OAuth callback and session cookie',
		phase: 'api',
		priority: 9,
		project: api,
		scope: ['src/session/**', 'src/routes/auth.ts'],
		body: 'Handle `/auth/callback`, exchange the code, set an **HttpOnly** cookie.\n\n- PKCE\n- state check',
		acceptance: ['Login round trip works against the staging IdP', 'Cookie is HttpOnly and SameSite=Lax'],
	},
	{ id: 'WEB-10', title: 'Smoother drag and drop', phase: 'web', priority: 6, project: web },
	{ id: 'API-3', title: 'Audit log for admin actions', phase: 'api', priority: 6, review: 'human', project: api },
	{
		id: 'INF-1',
		title: 'CI: cache node_modules between jobs',
		phase: 'infra',
		priority: 6,
		project: api,
	},
	{ id: 'API-5', title: 'Migrate the users table to UUID keys', phase: 'api', priority: 7, project: api },
	{ id: 'WEB-8', title: 'Upgrade to React 19', phase: 'web', priority: 2, project: web },
	{ id: 'WEB-12', title: 'Show a toast when the session expires', phase: 'web', priority: 8, project: web },
	{ id: 'API-7', title: 'Rate-limit POST /login per IP', phase: 'api', priority: 7, project: api },
	{
		id: 'API-8',
		title: 'Refresh tokens for the mobile app',
		phase: 'api',
		priority: 6,
		project: api,
		scope: ['src/session/refresh.ts'],
	},
	{ id: 'XSS-1', title: '<img src=x onerror=alert(1)>', phase: 'web', priority: 6, body: hostileBody, project: web },
	{ id: 'API-9', title: 'Paginate GET /projects', phase: 'api', priority: 5, dependsOn: ['API-4'], project: api },
	{ id: 'WEB-15', title: 'Dark mode for the settings page', phase: 'web', priority: 3, project: web },
	{ id: 'INF-3', title: 'Nightly backup of the Postgres volume', phase: 'infra', priority: 2, project: api },
	{ id: 'RUST-1', title: 'Port the diff engine to Rust', phase: 'infra', priority: 1, requires: ['lang:rust'] },
];

export async function seedRealisticBoard(dataDir: string, planner: RpcClient): Promise<Seeded> {
	await planner.request('card/create', { cards });
	const agents: RpcClient[] = [];
	const agent = async (id: string, kind: string): Promise<RpcClient> => {
		const c = await client(dataDir, { agent: { id, name: id, client: kind, capabilities: ['lang:ts'] } });
		agents.push(c);
		return c;
	};
	const claude = await agent('claude-code', 'claude-code');
	const codex = await agent('codex-2', 'codex');
	const cursor = await agent('cursor-1', 'cursor');

	for (const [who, id] of [
		[claude, 'API-1'],
		[codex, 'WEB-2'],
		[cursor, 'INF-0'],
	] as const) {
		const { lease } = await who.request('card/claim', { cardId: id });
		await who.request('card/complete', { cardId: id, epoch: lease?.epoch, result: 'merged' });
	}
	for (const [who, id, progress, note] of [
		[cursor, 'API-4', 60, 'writing the callback tests'],
		[codex, 'WEB-10', 25, 'reading the drop-zone code'],
		[claude, 'INF-1', 80, 'measuring the cache hit rate'],
	] as const) {
		const { lease } = await who.request('card/claim', { cardId: id, ttlSeconds: 900 });
		await who.request('card/heartbeat', { cardId: id, epoch: lease?.epoch, progress, note });
	}
	const audit = await claude.request('card/claim', { cardId: 'API-3' });
	await claude.request('card/complete', {
		cardId: 'API-3',
		epoch: audit.lease?.epoch,
		result: 'Admin actions write to `audit_log`; see **docs/audit.md**.',
	});
	await codex.request('card/comment', {
		cardId: 'WEB-10',
		text: 'Should the drop marker snap to the nearest gap, or follow the pointer?',
		question: true,
	});
	await planner.request('card/block', { cardId: 'API-5', reason: 'waiting for the DBA to review the migration plan' });
	await planner.request('card/block', { cardId: 'WEB-8', reason: 'blocked on the router upgrade' });

	const columns: Seeded['columns'] = {
		'API-1': 'done',
		'WEB-2': 'done',
		'INF-0': 'done',
		'API-4': 'inProgress',
		'WEB-10': 'inProgress',
		'INF-1': 'inProgress',
		'API-3': 'review',
		'API-5': 'blocked',
		'WEB-8': 'blocked',
		'WEB-12': 'ready',
		'API-7': 'ready',
		'API-8': 'ready',
		'XSS-1': 'ready',
		'API-9': 'ready',
		'WEB-15': 'ready',
		'INF-3': 'ready',
		'RUST-1': 'ready',
	};
	const counts = { ready: 0, inProgress: 0, review: 0, blocked: 0, done: 0 };
	for (const col of Object.values(columns)) {
		counts[col]++;
	}
	return {
		columns,
		counts,
		close: async () => {
			for (const a of agents) {
				a.close();
			}
			await Promise.resolve();
		},
	};
}
