export {
  TestCluster,
  postgresAvailable,
  postgresBinDir,
  startCluster,
  type ClusterOptions,
} from './cluster.js';
export { TcpProxy } from './tcp-proxy.js';
