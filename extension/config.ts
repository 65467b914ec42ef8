/**
 * The extension's settings (package.json `contributes.configuration`), read in one place. Unset
 * values fall back to what the CLI would use or to the hub's own thresholds.
 */
import { userInfo } from 'node:os';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import * as vscode from 'vscode';
import { resolveDataDir } from '../core/paths';
import type { AgentInfo, HealthThresholds } from '../core/protocol';

export interface BatonConfig {
	/** Absolute data dir of the hub to use. */
	dataDir: string;
	/** Passed to a spawned hub as DATABASE_URL (team mode); undefined keeps the environment's. */
	databaseUrl: string | undefined;
	claimTtlSeconds: number;
	/** Display name of the human's agent. */
	agentName: string;
	/** Thresholds set in the settings; the rest come from the hub's hello. */
	thresholds: Partial<HealthThresholds>;
	/** How many recently completed cards the Backlog shows. */
	doneLimit: number;
	/** Where "Start Agents…" runs `baton run`: a terminal (its live table) or the background. */
	agentsStartIn: 'terminal' | 'background';
}

const thresholdKeys = ['healthySeconds', 'lateSeconds', 'staleSeconds', 'stallSeconds'] as const;

function positive(value: unknown): number | undefined {
	return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

function expandHome(p: string): string {
	if (p === '~' || p.startsWith('~/')) {
		return join(homedir(), p.slice(1));
	}
	return p;
}

export function readConfig(): BatonConfig {
	const c = vscode.workspace.getConfiguration('baton');
	const rawDir = c.get<string>('dataDir', '').trim();
	let dataDir = resolveDataDir();
	if (rawDir !== '') {
		const expanded = expandHome(rawDir);
		const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
		// A relative setting is relative to the (first) workspace folder, like other path settings.
		dataDir = isAbsolute(expanded) || folder === undefined ? expanded : join(folder, expanded);
	}
	const thresholds: Partial<HealthThresholds> = {};
	for (const key of thresholdKeys) {
		const v = positive(c.get<number | null>(`health.${key}`, null));
		if (v !== undefined) {
			thresholds[key] = v;
		}
	}
	const url = c.get<string>('databaseUrl', '').trim();
	return {
		dataDir,
		databaseUrl: url === '' ? undefined : url,
		claimTtlSeconds: Math.min(3600, Math.max(5, Math.round(positive(c.get('claim.ttlSeconds')) ?? 300))),
		agentName: c.get<string>('agent.name', '').trim(),
		thresholds,
		doneLimit: Math.max(0, Math.round(c.get<number>('backlog.doneLimit', 20))),
		agentsStartIn: c.get<string>('agents.startIn', 'terminal') === 'background' ? 'background' : 'terminal',
	};
}

/** The OS user name made safe for an agent id (no spaces or control characters). */
function userName(): string {
	let name: string;
	try {
		name = userInfo().username;
	} catch {
		name = process.env.USER ?? process.env.USERNAME ?? 'user';
	}
	const safe = name.replace(/[^\p{L}\p{N}._@-]+/gu, '-');
	return safe === '' ? 'user' : safe;
}

/** The human acts as agent `vscode:<user>`; claims from VS Code are recorded under it. */
export function humanAgent(config: BatonConfig): AgentInfo {
	const user = userName();
	return {
		id: `vscode:${user}`,
		name: config.agentName === '' ? user : config.agentName,
		client: `vscode:${user}`,
		host: vscode.env.machineId.slice(0, 12),
		pid: process.pid,
	};
}

/** Settings win over the hub's thresholds, key by key. */
export function effectiveThresholds(hub: HealthThresholds, config: BatonConfig): HealthThresholds {
	return { ...hub, ...config.thresholds };
}
