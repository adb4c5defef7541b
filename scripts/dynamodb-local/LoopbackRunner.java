// LoopbackRunner starts DynamoDB Local with its HTTP connector bound to 127.0.0.1 only.
// DynamoDB Local has no host option and listens on every interface; this launcher builds
// the server from the same command line as the jar's own main, sets the host of its Jetty
// connectors, then starts it. Telemetry is never set up (and -disableTelemetry is passed).
import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.lang.reflect.Field;
import org.eclipse.jetty.server.AbstractNetworkConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;

public final class LoopbackRunner {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field f = DynamoDBProxyServer.class.getDeclaredField("server");
    f.setAccessible(true);
    Server server = (Server) f.get(proxy);
    for (Connector c : server.getConnectors()) {
      if (c instanceof AbstractNetworkConnector) {
        ((AbstractNetworkConnector) c).setHost("127.0.0.1");
      }
    }
    proxy.start();
    proxy.join();
  }
}
