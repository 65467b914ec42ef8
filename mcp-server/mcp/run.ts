/**
 * `baton mcp`: the MCP server over stdio for one agent session. stdout is the protocol, so every log
 * goes to stderr; it opens no listening socket (RELIABILITY 29), only a client connection to the hub.
 * When stdin closes the hub connection is closed, and the hub releases this agent's claims at once.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';

import packageJson from '../../package.json';
import { findGitRepo } from '../../core/client/gitRepo';
import { BatonError } from '../../core/errors';
import { createLogger } from '../../core/log';
import { AgentId, AgentKind, CardId, Capabilities, Hello, type AgentInfo } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { openHub } from '../cli/hubClient';
import { mcpMarker } from '../cli/insideAgent';
import { explicitProject, workingProject } from '../cli/project';
import { ToolContext } from './context';
import { startKeepAlive } from './keepAlive';
import { createMcpServer } from './server';
import { LineStdioTransport } from './stdioTransport';

const log = createLogger('mcp');

export const mcpUsage = `Usage: baton mcp [--agent NAME] [--capabilities a,b] [--project ID] [--data-dir DIR]

Serves Baton's MCP tools over stdio for one agent session. Point your MCP client at the
command "baton up" prints ("baton init" writes it into a repository). Logs go to stderr.

Set by Baton's supervisor (baton run) for the agents it starts: BATON_SESSION (this session's id:
the one that holds the dispatched card), BATON_AGENT_KIND (the agent's kind) and BATON_CARD_ID
(claim without a card id claims that card).

Options:
  --agent NAME          Agent id (default: BATON_AGENT, else the MCP client's name + a session id)
  --capabilities a,b    Capabilities this agent advertises on claim (default: BATON_CAPABILITIES)
  --project ID          The agent's project, "*" for any (default: BATON_PROJECT, else the git
                        repository of the working directory): claim gets its cards and cards with
                        none, create gives cards this project
  --data-dir DIR        Backlog data dir (default: BATON_DATA_DIR, else ~/.config/baton/backlog)
  --version             Print the version and exit (baton init checks its launch command with it)
  -h, --help            Show this help`;

export interface McpOptions {
	agent: string | undefined;
	capabilities: string[];
	/** --project, else BATON_PROJECT; undefined: inferred from the working directory. */
	project: string | undefined;
	dataDir: string | undefined;
	/**
	 * Set by Baton's supervisor for the agents it starts: BATON_SESSION (the hello session that
	 * holds the dispatched card), BATON_AGENT_KIND (the agent's kind) and BATON_CARD_ID (its card).
	 */
	session?: string;
	kind?: string;
	cardId?: string;
}

/** Parses `baton mcp` arguments; throws BatonError('invalid_input') on bad values (exit 2). */
export function parseMcpArgs(argv: string[], env: NodeJS.ProcessEnv): McpOptions | 'help' | 'version' {
	const { values } = parseArgs({
		args: argv,
		options: {
			agent: { type: 'string' },
			capabilities: { type: 'string' },
			project: { type: 'string' },
			'data-dir': { type: 'string' },
			help: { type: 'boolean', short: 'h' },
			version: { type: 'boolean' },
		},
		strict: true,
		allowPositionals: false,
	});
	if (values.help === true) {
		return 'help';
	}
	if (values.version === true) {
		return 'version';
	}
	const agent = values.agent ?? (env.BATON_AGENT === '' ? undefined : env.BATON_AGENT);
	if (agent !== undefined && !AgentId.safeParse(agent).success) {
		throw new BatonError(
			'invalid_input',
			`--agent "${agent}" is not a valid agent id: use no spaces, at most 128 characters.`,
		);
	}
	const rawCaps = values.capabilities ?? env.BATON_CAPABILITIES ?? '';
	const capabilities = rawCaps
		.split(',')
		.map(c => c.trim())
		.filter(c => c !== '');
	const caps = Capabilities.safeParse(capabilities);
	if (!caps.success) {
		throw new BatonError('invalid_input', `--capabilities "${rawCaps}" is invalid: use values like lang:ts,repo:web.`);
	}
	return {
		agent,
		capabilities,
		project: explicitProject(values.project, env),
		dataDir: values['data-dir'],
		...dispatchEnv(env),
	};
}

/** BATON_SESSION, BATON_AGENT_KIND and BATON_CARD_ID, each checked; empty means unset. */
function dispatchEnv(env: NodeJS.ProcessEnv): Pick<McpOptions, 'session' | 'kind' | 'cardId'> {
	const given = (name: string): string | undefined => (env[name] === '' ? undefined : env[name]);
	const session = given('BATON_SESSION');
	const kind = given('BATON_AGENT_KIND');
	const cardId = given('BATON_CARD_ID');
	if (session !== undefined && !Hello.shape.session.safeParse(session).success) {
		throw new BatonError(
			'invalid_input',
			`BATON_SESSION "${session}" is not a session id: 16-100 of A-Z a-z 0-9 _ . : -.`,
		);
	}
	if (kind !== undefined && !AgentKind.safeParse(kind).success) {
		throw new BatonError(
			'invalid_input',
			`BATON_AGENT_KIND "${kind}" is not an agent kind: a lowercase word such as claude.`,
		);
	}
	if (cardId !== undefined && !CardId.safeParse(cardId).success) {
		throw new BatonError('invalid_input', `BATON_CARD_ID "${cardId}" is not a card id.`);
	}
	return {
		...(session === undefined ? {} : { session }),
		...(kind === undefined ? {} : { kind }),
		...(cardId === undefined ? {} : { cardId }),
	};
}

/** "Claude Code" -> "claude-code": an agent id derived from the MCP client's name. */
export function agentIdFromClient(clientName: string | undefined, sessionId: string): string {
	const base = (clientName ?? 'mcp')
		.toLowerCase()
		.replace(/[^a-z0-9._-]+/g, '-')
		.replace(/^-+|-+$/g, '')
		.slice(0, 60);
	return `${base === '' ? 'mcp' : base}-${sessionId}`;
}

export async function runMcp(argv: string[]): Promise<number> {
	let options: McpOptions | 'help' | 'version';
	try {
		options = parseMcpArgs(argv, process.env);
	} catch (error) {
		// Usage errors and --help are this command's own output (stderr: stdout is the protocol), not log lines.
		console.error(`baton mcp: ${error instanceof Error ? error.message : String(error)}\n\n${mcpUsage}`);
		return 2;
	}
	if (options === 'help') {
		console.error(mcpUsage);
		return 0;
	}
	if (options === 'version') {
		process.stdout.write(`${packageJson.version}\n`);
		return 0;
	}
	const { agent, capabilities, dataDir, kind, cardId } = options;
	const project = await workingProject(process.cwd(), options.project);
	// Sent with claims as `root`: a project with workspaces on gets the card's worktree in this checkout.
	const root = (await findGitRepo(process.cwd()))?.root;
	log.info(
		project === null
			? 'no project (not in a git repository, no --project): claims get only cards without one'
			: `project ${project}`,
	);
	const sessionId = randomBytes(3).toString('hex');
	// This process's session, the same at every reconnect (a restarted hub, a failover): the leases it
	// claims are its own, and no other session may act on them, whatever agent id it declares.
	// A dispatched agent's is the supervisor's (BATON_SESSION): the session its card is held by.
	const session = options.session ?? randomBytes(16).toString('hex');
	// What runs inside this agent's session (whatever it starts) is no person approving.
	process.env[mcpMarker] = `baton mcp (pid ${process.pid})`;

	let hubPromise: Promise<RpcClient> | undefined;
	let stopKeepAlive: (() => void) | undefined;
	const connect = (clientName: string | undefined, clientVersion: string | undefined): Promise<RpcClient> => {
		if (hubPromise !== undefined) {
			return hubPromise;
		}
		const attempt = (async () => {
			const id = agent ?? agentIdFromClient(clientName, sessionId);
			const info: AgentInfo = {
				id,
				name: agent ?? (clientName === undefined ? id : `${clientName} (${sessionId})`),
				client:
					clientName === undefined
						? 'mcp'
						: `${clientName}${clientVersion === undefined ? '' : ` ${clientVersion}`}`.slice(0, 100),
				host: hostname(),
				pid: process.pid,
				...(capabilities.length > 0 ? { capabilities } : {}),
				...(kind === undefined ? {} : { kind }),
			};
			// A list page's rows go to the agent compacted, as the hub built them (RpcClientOptions.unchecked).
			const hub = await openHub({
				dataDir,
				client: 'mcp',
				agent: info,
				reconnect: true,
				session,
				unchecked: ['card/listRows'],
			});
			// At once: the hub pushes the inbox left unacknowledged right after the hello.
			ctx.listen(hub);
			stopKeepAlive = startKeepAlive(hub);
			log.info(`connected to the hub as agent ${id}`);
			return hub;
		})();
		hubPromise = attempt;
		// A failed connect is retried by the next tool call rather than cached forever.
		attempt.catch(() => {
			if (hubPromise === attempt) {
				hubPromise = undefined;
			}
		});
		return attempt;
	};

	const ctx = new ToolContext(
		() => {
			const client = server.server.getClientVersion();
			return connect(client?.name, client?.version);
		},
		capabilities,
		project,
		root,
		cardId,
	);
	const server = createMcpServer(ctx);
	server.server.oninitialized = () => {
		const client = server.server.getClientVersion();
		// Connect as soon as the identity is known, so the first tool call does not pay for it.
		connect(client?.name, client?.version).catch((error: unknown) => {
			log.warn(`cannot reach the Baton hub: ${error instanceof Error ? error.message : String(error)}`);
			hubPromise = undefined;
		});
	};

	// Not the SDK's StdioServerTransport: it ends the session on a line over 10 MB, which a create the
	// schema accepts can exceed; such a request must reach the hub client and be refused as too_large.
	const transport = new LineStdioTransport();
	await server.connect(transport);
	log.info(`serving over stdio (pid ${process.pid})`);
	if (process.stdin.isTTY) {
		log.info('this speaks MCP on stdin/stdout for an agent\'s MCP client; run "baton up" to see how to configure one.');
	}

	await new Promise<void>(resolve => {
		let done = false;
		const finish = (why: string): void => {
			if (done) {
				return;
			}
			done = true;
			log.info(`${why}; closing the hub connection`);
			resolve();
		};
		process.stdin.once('end', () => finish('stdin closed'));
		process.stdin.once('close', () => finish('stdin closed'));
		process.once('SIGINT', () => finish('SIGINT'));
		process.once('SIGTERM', () => finish('SIGTERM'));
		server.server.onclose = () => finish('MCP connection closed');
	});

	stopKeepAlive?.();
	if (hubPromise !== undefined) {
		// Closing the connection is the signal: the hub releases an mcp agent's claims when its last
		// connection closes.
		const hub = await hubPromise.catch(() => undefined);
		hub?.close();
	}
	await server.close().catch(() => undefined);
	// Nothing else should keep the process alive; this is a backstop against a lingering handle.
	setTimeout(() => process.exit(0), 500).unref();
	return 0;
}
