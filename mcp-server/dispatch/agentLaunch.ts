/**
 * What starting a dispatched card's agent takes before its process exists: the seat's own credential
 * for the card's claim (the agent never sees the hub token), the seat record (so a supervisor killed
 * from here on can still act as the card's holder), the agent's MCP config and prompt files, its log,
 * and its program line — its kind's built-in command or the `--command` template — wrapped in the
 * platform's sandbox (bubblewrap: sandbox.ts; Seatbelt: seatbelt.ts). Must not: start the process
 * (agentJob.ts does, with spawnAgent.ts), or follow it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { createLogger, errorText } from '../../core/log';
import { type Launch, buildLaunch, promptText, writeMcpConfig } from './agents';
import type { JobContext, JobStart } from './agentJob';
import { agentMcpServer } from './mcpConfigFile';
import { logPath, openLogForAgent } from './outputLog';
import { programPaths, sandboxed } from './sandbox';
import { seatbelted } from './seatbelt';
import { seatFilePath, type SeatRecord, writeSeatRecord } from './seatFile';

const log = createLogger('run').child('job');

export interface PreparedLaunch {
	launch: Launch;
	/** The log's descriptor, for the agent's stdout and stderr, and where this attempt starts in it. */
	fd: number;
	offset: number;
	path: string;
	startedAt: number;
	workspace: string;
}

/** Everything the agent of `s.card` needs on disk, and the line that starts it. */
export async function prepareLaunch(ctx: JobContext, s: JobStart): Promise<PreparedLaunch> {
	const { card, epoch, identity, seat } = s;
	const dir = join(ctx.dataDir, 'runs', ctx.run);
	const workspace = s.claim.workspace?.path ?? s.root;
	const path = logPath(ctx.dataDir, ctx.run, card.id);
	// The agent's own credential, for this card's claim only: it never sees the hub token.
	const { token } = await s.conn.request('dispatch/seat', { cardId: card.id, epoch });
	const startedAt = Date.now();
	const { fd, offset } = openLogForAgent(
		path,
		`${new Date(startedAt).toISOString()} seat ${seat}, ${identity.agent}, attempt epoch ${epoch}`,
	);
	const server = agentMcpServer(ctx.batonMcp, {
		cardId: card.id,
		agent: identity.agent,
		session: identity.session,
		kind: ctx.kind,
		dataDir: ctx.dataDir,
		project: card.project ?? null,
		seat: { token, socket: ctx.hubSocket },
	});
	const record: SeatRecord = {
		cardId: card.id,
		epoch,
		agent: identity.agent,
		session: identity.session,
		seat,
		kind: ctx.kind,
		logOffset: offset,
		startedAt: new Date(startedAt).toISOString(),
	};
	// Before the agent exists: a supervisor killed from here on can still act as the card's holder.
	writeSeatRecord(seatFilePath(ctx.dataDir, ctx.run, card.id), record);
	const mcpConfigPath = join(dir, `${card.id}.mcp.json`);
	writeMcpConfig(mcpConfigPath, server);
	// The card's messages and earlier attempts belong in the prompt: one card/get on the
	// seat's own connection. Without them (the hub did not answer) the agent still has `show`.
	const detail = await s.conn.request('card/get', { cardId: card.id }).catch((e: unknown) => {
		log.warn(`${card.id}: reading its messages for the prompt failed: ${errorText(e)}`);
		return undefined;
	});
	const prompt = promptText(card, {
		handoff: s.claim.handoff,
		workspace,
		messages: detail?.messages,
		attempts: detail?.attempts,
	});
	const promptFile = join(dir, `${card.id}.prompt.md`);
	writeFileSync(promptFile, prompt, { mode: 0o600 });
	const plain = buildLaunch({
		agent: ctx.agent,
		command: ctx.command,
		card,
		workspace,
		mcpConfigPath,
		promptFile,
		prompt,
		env: { ...ctx.baseEnv, ...server.env },
		mcpServer: server,
	});
	const plan = {
		workspace,
		repoRoot: ctx.repoRoot,
		dataDir: ctx.dataDir,
		socket: ctx.hubSocket,
		readable: [mcpConfigPath, promptFile],
		programs: [...programPaths(ctx.batonMcp), ...programPaths(plain)],
		kind: ctx.kind,
	};
	const launch =
		ctx.sandbox.kind === 'bwrap'
			? sandboxed(ctx.sandbox.program, plain, plan)
			: ctx.sandbox.kind === 'seatbelt'
				? seatbelted(ctx.sandbox.program, plain, plan)
				: plain;
	return { launch, fd, offset, path, startedAt, workspace };
}
