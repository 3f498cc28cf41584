package httpapi

// RouteNames are the names of the routes s serves.
func (s *Server) RouteNames() []string {
	var names []string
	for _, rt := range s.routes {
		if !rt.open {
			names = append(names, rt.name)
		}
	}
	return names
}

// HasRights reports whether the rights table has a line for route.
func HasRights(route string) bool {
	_, ok := routeRights[route]
	return ok
}
