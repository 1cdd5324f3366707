// The part of autocannon 8's API the benchmarks use (the package ships no types).
declare module 'autocannon' {
  interface Histogram { average: number; mean: number; p50: number; p99: number }
  interface Result { requests: Histogram & { total: number }; latency: Histogram; non2xx: number; errors: number; timeouts: number }
  interface RawRequest { method?: string; path?: string; headers?: Record<string, string>; body?: string }
  interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    method?: string;
    body?: string;
    headers?: Record<string, string>;
    requests?: Array<{ method?: string; path?: string; setupRequest?: (req: RawRequest) => RawRequest }>;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
