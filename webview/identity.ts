/**
 * Who the browser board is to the hub: one stable agent id per browser profile (kept in
 * localStorage), and the random hex the client's request ids use. No transport, no DOM beyond storage.
 */

/** `bytes` random bytes as hex (crypto.randomUUID exists only in secure contexts). */
export const randomHex = (bytes: number): string =>
	Array.from(crypto.getRandomValues(new Uint8Array(bytes)), b => b.toString(16).padStart(2, '0')).join('');

/**
 * The browser board acts as one stable agent per browser profile, so its claims stay its own across
 * reconnects (the hub would otherwise name each connection anew) and its pings renew their leases.
 * In VS Code the extension answers the hello with its own identity (`vscode:<user>`).
 */
export function boardAgentId(): string {
	try {
		const saved = localStorage.getItem('baton.boardAgent');
		if (saved !== null && /^board:[0-9a-f]{8}$/.test(saved)) {
			return saved;
		}
		const id = `board:${randomHex(4)}`;
		localStorage.setItem('baton.boardAgent', id);
		return id;
	} catch {
		// Storage can be disabled; a per-page identity still works, it just does not survive a reload.
		return `board:${randomHex(4)}`;
	}
}
