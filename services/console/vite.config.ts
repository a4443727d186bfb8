import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

// nginx serves dist/ at the front door (infra/nginx), so the console and the API share an origin
// and the console calls /api/ with no CORS. `npm run dev` proxies the same paths to it.
const front = 'http://127.0.0.1:8000';

export default defineConfig({
  plugins: [preact()],
  build: { outDir: 'dist', emptyOutDir: true },
  server: { proxy: { '/api': front, '/flags': front, '/status': front } },
});
