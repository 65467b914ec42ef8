/**
 * The bench's suite (test/bench/activation.ts): activates the extension once in a fresh extension
 * host and writes the timings to BATON_BENCH_OUT. The hub is not waited for by activation; the time
 * to a live connection is recorded separately, as context.
 */
import { writeFileSync } from 'node:fs';
import * as vscode from 'vscode';
import type { BatonApi } from '../../../extension/main';
import { env, extensionId, waitFor } from './helpers';

export interface ActivationSample {
	/** Inside activate() (the extension's own wiring). */
	activateMs: number;
	/** Evaluation of the bundle's modules before activate() ran. */
	moduleLoadMs: number;
	/** CPU time of both. */
	cpuMs: number;
	/** ext.activate() as seen from outside: module load + activate(). */
	loadAndActivateMs: number;
	/** From activation to a connected, loaded hub connection (hub spawn or attach included). */
	connectedMs: number;
}

export async function run(): Promise<void> {
	const ext = vscode.extensions.getExtension<BatonApi>(extensionId);
	if (!ext) {
		throw new Error(`${extensionId} is not loaded`);
	}
	if (ext.isActive) {
		throw new Error('the extension was already active: activation is no longer lazy');
	}
	const t0 = performance.now();
	const baton = await ext.activate();
	const loadAndActivateMs = performance.now() - t0;
	await waitFor('the hub connection', () => baton.hub.state === 'connected', 60_000);
	const connectedMs = performance.now() - t0;
	const sample: ActivationSample = {
		activateMs: baton.activationMs,
		moduleLoadMs: baton.moduleLoadMs,
		cpuMs: baton.activationCpuMs,
		loadAndActivateMs,
		connectedMs,
	};
	writeFileSync(env('BATON_BENCH_OUT'), JSON.stringify(sample));
}
