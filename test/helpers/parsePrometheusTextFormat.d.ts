/**
 * Types for parse-prometheus-text-format (the package ships none): its prom2json-like output. The
 * package is CommonJS (`module.exports = fn`); tsx's interop hands it over as the default import.
 */
declare module 'parse-prometheus-text-format' {
	export interface PrometheusSample {
		labels?: Record<string, string>;
		/** Counters, gauges, untyped. */
		value?: string;
		/** Histograms: cumulative count by upper bound (`le`). */
		buckets?: Record<string, string>;
		/** Summaries. */
		quantiles?: Record<string, string>;
		count?: string;
		sum?: string;
	}
	export interface PrometheusFamily {
		name: string;
		help: string;
		type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
		metrics: PrometheusSample[];
	}
	export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
