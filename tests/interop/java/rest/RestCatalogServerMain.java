import org.apache.paimon.rest.RESTCatalogServer;
import org.apache.paimon.rest.auth.BearTokenAuthProvider;
import org.apache.paimon.rest.responses.ConfigResponse;

import okhttp3.mockwebserver.MockWebServer;

import java.lang.reflect.Field;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Paimon's reference REST catalog server ({@code RESTCatalogServer} from paimon-core's tests jar)
 * on 127.0.0.1 and a free port, over a {@code file:} warehouse.
 *
 * <p>Arguments: the data path (a {@code file:} URL) and the catalog's warehouse name. Prints one
 * JSON line, {@code {"uri": ..., "token": ..., "warehouse": ...}}, then serves until its stdin
 * closes, and shuts the server down. Clients authenticate with the bearer token it printed
 * ({@code token.provider=bear}); data tokens are off, so clients read the table files directly.
 */
public class RestCatalogServerMain {

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: RestCatalogServerMain <file: data path> <warehouse name>");
            System.exit(2);
        }
        String dataPath = args[0];
        String warehouse = args[1];
        String token = UUID.randomUUID().toString();
        Map<String, String> defaults = new HashMap<>();
        defaults.put("prefix", "paimon");
        defaults.put("warehouse", warehouse);
        defaults.put("data-token.enabled", "false");
        RESTCatalogServer server =
                new RESTCatalogServer(
                        dataPath,
                        new BearTokenAuthProvider(token),
                        new ConfigResponse(defaults, new HashMap<>()),
                        warehouse);
        // RESTCatalogServer.start() binds to "localhost"; bind its web server to 127.0.0.1
        // explicitly, so the URL never depends on how the machine resolves names.
        Field field = RESTCatalogServer.class.getDeclaredField("server");
        field.setAccessible(true);
        MockWebServer web = (MockWebServer) field.get(server);
        web.start(InetAddress.getByName("127.0.0.1"), 0);
        String uri = "http://127.0.0.1:" + web.getPort();
        System.out.println(
                "{\"uri\": \"" + uri + "\", \"token\": \"" + token + "\", \"warehouse\": \""
                        + warehouse + "\"}");
        System.out.flush();
        while (System.in.read() != -1) {
            // serve until the test session closes our stdin
        }
        server.shutdown();
    }
}
