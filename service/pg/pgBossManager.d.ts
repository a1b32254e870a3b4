// pg-boss's internal job manager (node_modules/pg-boss/src/manager.js): what bossCompletions.ts patches.
declare module 'pg-boss/src/manager.js' {
  const Manager: {
    prototype: {
      complete(...args: unknown[]): Promise<unknown>;
      fail(...args: unknown[]): Promise<unknown>;
      emit(event: string, value: unknown): boolean;
    };
  };
  export default Manager;
}
