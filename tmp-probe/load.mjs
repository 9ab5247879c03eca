const m = await import('usearch'); console.log(typeof m.default.Index);
